# Sourced by the command-line tests (POSIX sh): checks that report "ok: ..."
# or "FAIL: ..." and set fail=1; exit codes and messages of the programs.
# The caller sets cli_tmp to a scratch folder first.
fail=0
check() { if [ "$1" = 0 ]; then echo "ok: $2"; else echo "FAIL: $2"; fail=1; fi; }

# expect_exit CODE WHAT FRAGMENT COMMAND...: COMMAND exits with CODE and its
# stderr holds FRAGMENT (a grep pattern); its stdout is left in $cli_tmp/out.
expect_exit() {
    code=$1 what=$2 frag=$3
    shift 3
    "$@" >"$cli_tmp/out" 2>"$cli_tmp/err"
    rc=$?
    [ "$rc" = "$code" ] && grep -q -- "$frag" "$cli_tmp/err"
    check $? "$what: exit $rc (want $code): $(head -n 1 "$cli_tmp/err")"
}

# check_version NAME PROGRAM: --version prints "NAME VERSION" and "libgmlp
# VERSION, N OpenCL platform(s)", exit 0, also with no OpenCL platform (an
# ICD loader pointed at an empty folder).
check_version() {
    for vendors in "" "$cli_tmp/no-icds"; do
        mkdir -p "$cli_tmp/no-icds"
        if [ -n "$vendors" ]; then
            OCL_ICD_VENDORS=$vendors "$2" --version >"$cli_tmp/version" 2>"$cli_tmp/err"
        else
            "$2" --version >"$cli_tmp/version" 2>"$cli_tmp/err"
        fi
        rc=$?
        [ $rc = 0 ] && [ "$(wc -l <"$cli_tmp/version")" = 2 ] &&
            head -n 1 "$cli_tmp/version" | grep -Eq "^$1 [0-9]+\.[0-9]+\.[0-9]+$" &&
            tail -n 1 "$cli_tmp/version" | grep -Eq '^libgmlp [0-9]+\.[0-9]+\.[0-9]+, [0-9]+ OpenCL platforms?$'
        check $? "--version${vendors:+ with no OpenCL platform}: exit $rc: $(tr '\n' '|' <"$cli_tmp/version")"
    done
    grep -q ", 0 OpenCL platforms$" "$cli_tmp/version"
    check $? "--version with no OpenCL platform counts 0 platforms"
}

# check_help PROGRAM OPTION...: --help exits 0 with nothing on stderr, and
# lists each OPTION (as "-x," or "--long" words).
check_help() {
    prog=$1
    shift
    "$prog" --help >"$cli_tmp/help" 2>"$cli_tmp/err"
    rc=$?
    [ $rc = 0 ] && [ ! -s "$cli_tmp/err" ]
    check $? "--help: exit $rc, nothing on stderr"
    missing=
    for opt in "$@"; do
        grep -Eq -- "(^|[ ,])$opt([ ,=]|$)" "$cli_tmp/help" || missing="$missing $opt"
    done
    [ -z "$missing" ]
    check $? "--help lists every option${missing:+ (missing:$missing)}"
}
