/* The wgmma splice (lib/ops/wgmma_splice.h) on PTX text, no device: what it
 * writes for each marker, the header it rewrites, and every refusal.
 *   test_wgmma_splice                 the cases below
 *   test_wgmma_splice --splice IN OUT IN spliced into OUT, the mma count
 *                                     printed (test_wgmma_splice.sh: then
 *                                     ptxas -arch=sm_90a and the SASS) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ops/wgmma_splice.h"

/* PTX in the form NVIDIA's OpenCL writes, around body */
static char *ptx_of(const char *version, const char *target, const char *body)
{
    static const char fmt[] = "//\n// Generated\n//\n\n.version %s\n.target %s\n.address_size 64\n\n"
                              ".entry k(\n\t.param .u64 k_param_0\n)\n{\n\t.reg .f32 %%f<9>;\n\t.reg .b64 %%rd<3>;\n\n"
                              "%s\tret;\n}\n";
    size_t n = strlen(fmt) + strlen(version) + strlen(target) + strlen(body) + 1;
    char *s = malloc(n);
    snprintf(s, n, fmt, version, target, body);
    return s;
}

static const char mma8[] = "\t// begin inline asm\n"
                           "\t// gmlp.wgmma.v1 mma m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 0, 1\n"
                           "\t// end inline asm\n";
static const char fence_commit_wait[] = "\t// gmlp.wgmma.v1 fence\n\t// gmlp.wgmma.v1 commit\n\t// gmlp.wgmma.v1 wait 1\n";

/* Splices version/target/body; GMLP_OK: *out the result (freed by the caller). */
static gmlp_status splice(const char *version, const char *target, const char *body, char **out, size_t *mmas)
{
    gmlp_error err = {0};
    char *in = ptx_of(version, target, body);
    size_t n;
    gmlp_status st = gmlp_wgmma_splice(&err, in, strlen(in), out, &n, mmas);
    if (st == GMLP_OK)
        CHECK(strlen(*out) == n, "the spliced length %zu is not its text's %zu", n, strlen(*out));
    else
        CHECK(!*out && err.msg[0], "a refusal left output or no message (status %d)", (int)st);
    free(in);
    return st;
}

static void test_spliced(void)
{
    char body[1024], *out = NULL;
    size_t mmas;
    snprintf(body, sizeof body,
             "\t// gmlp.wgmma.v1 proxy\n\t// gmlp.wgmma.v1 fence\n%s\t// gmlp.wgmma.v1 commit\n\t// gmlp.wgmma.v1 wait 0\n",
             mma8);
    CHECK(splice("7.5", "sm_90, texmode_independent", body, &out, &mmas) == GMLP_OK, "a well-formed PTX refused");
    if (!out)
        return;
    CHECK(mmas == 1, "%zu mma markers counted, want 1", mmas);
    CHECK(strstr(out, "\n.version 8.0\n") != NULL, "ISA 7.5 not raised to 8.0 (wgmma's)");
    CHECK(strstr(out, "\n.target sm_90a, texmode_independent\n") != NULL, "the target not sm_90a with its options");
    CHECK(strstr(out, "\twgmma.fence.sync.aligned;\n") && strstr(out, "\twgmma.commit_group.sync.aligned;\n") &&
              strstr(out, "\twgmma.wait_group.sync.aligned 0;\n") &&
              strstr(out, "\tfence.proxy.async.shared::cta;\n"),
          "proxy, fence, commit or wait not spliced, or not indented as their markers");
    CHECK(strstr(out, "\t{ .reg .pred p; setp.ne.b32 p, 1, 0; wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 "
                      "{%f1, %f2, %f3, %f4}, %rd1, %rd2, p, 1, 1, 0, 1; }\n") != NULL,
          "the mma not spliced as wgmma.mma_async with its registers, scale-d set, transposes 0 and 1:\n%s", out);
    CHECK(strstr(out, "// begin inline asm\n") && strstr(out, "\tret;\n}\n"), "the lines around the markers changed");
    CHECK(!strstr(out, "gmlp.wgmma"), "a marker left in the spliced PTX");
    CHECK(gmlp_wgmma_is_spliced(out, strlen(out)), "the spliced PTX not recognised as spliced");
    char *in = ptx_of("8.4", "sm_90, texmode_independent", body);
    CHECK(!gmlp_wgmma_is_spliced(in, strlen(in)), "unspliced PTX taken for spliced");
    free(in), free(out);

    /* ISA 8.x kept; sm_90a kept; f16 and the widest n; a buffer without its NUL */
    char regs[2048] = "", line[2560];
    for (int i = 0; i < 128; i++)
        snprintf(regs + strlen(regs), sizeof regs - strlen(regs), "%s%%f%d", i ? ", " : "", i + 1);
    snprintf(line, sizeof line, "// gmlp.wgmma.v1 mma m64n256k16.f32.f16.f16 {%s}, %%rd1, %%rd2, 1, 0\n", regs);
    CHECK(splice("8.4", "sm_90a", line, &out, &mmas) == GMLP_OK, "m64n256k16 f16 refused");
    if (out) {
        CHECK(strstr(out, "\n.version 8.4\n") && strstr(out, "\n.target sm_90a\n"), "ISA 8.4 or sm_90a not kept");
        CHECK(strstr(out, ".m64n256k16.f32.f16.f16 {%f1, ") && strstr(out, ", %f128}, %rd1, %rd2, p, 1, 1, 1, 0; }"),
              "m64n256k16's 128 accumulators or its transposes not spliced");
        free(out);
    }
    gmlp_error err = {0};
    char *whole = ptx_of("8.0", "sm_90", mma8);
    const char *cut = strstr(whole, "\t// begin inline asm");
    size_t n;
    CHECK(gmlp_wgmma_splice(&err, whole, (size_t)(cut - whole), &out, &n, &mmas) == GMLP_ERR_BUILD,
          "PTX cut before its marker (no NUL) spliced");
    free(whole);
}

static void test_refusals(void)
{
    static const struct {
        const char *version, *target, *body, *why;
        gmlp_status want;
    } cases[] = {
        {"8.0", "sm_90", "\tmov.f32 %f1, 0f00000000;\n", "no marker", GMLP_ERR_BUILD},
        {"8.0", "sm_90", fence_commit_wait, "markers but no mma", GMLP_ERR_BUILD},
        {"8.0", "sm_80", mma8, "Ampere's target", GMLP_ERR_UNSUPPORTED},
        {"8.0", "sm_100", mma8, "Blackwell's target", GMLP_ERR_UNSUPPORTED},
        {"8.0", "sm_90, sm_90a", mma8, "a second target on the line", GMLP_ERR_BUILD},
        {"6.4", "sm_90", mma8, "an ISA before 7.0", GMLP_ERR_BUILD},
        {"8", "sm_90", mma8, "a version without its minor", GMLP_ERR_BUILD},
        {"8.0", "sm_90", "\t// gmlp.wgmma.v1 mma m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3}, %rd1, %rd2, 0, 0\n",
         "3 accumulators for n 8", GMLP_ERR_BUILD},
        {"8.0", "sm_90", "\t// gmlp.wgmma.v1 mma m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4, %f5}, %rd1, %rd2, 0, 0\n",
         "5 accumulators for n 8", GMLP_ERR_BUILD},
        {"8.0", "sm_90", "\t// gmlp.wgmma.v1 mma m64n12k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4, %f5, %f6}, %rd1, %rd2, 0, 0\n",
         "n not a multiple of 8", GMLP_ERR_BUILD},
        {"8.0", "sm_90", "\t// gmlp.wgmma.v1 mma m64n8k16.f32.bf16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 0, 0\n",
         "mixed operand types", GMLP_ERR_BUILD},
        {"8.0", "sm_90", "\t// gmlp.wgmma.v1 mma m64n8k8.f32.tf32.tf32 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 0, 0\n",
         "a tf32 shape it does not splice", GMLP_ERR_BUILD},
        {"8.0", "sm_90", "\t// gmlp.wgmma.v1 mma m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 2, 0\n",
         "a transpose of 2", GMLP_ERR_BUILD},
        {"8.0", "sm_90", "\t// gmlp.wgmma.v1 mma m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, 0, 0\n",
         "a missing descriptor", GMLP_ERR_BUILD},
        {"8.0", "sm_90", "\t// gmlp.wgmma.v1 mma m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, 1.0}, %rd1, %rd2, 0, 0\n",
         "an immediate for an accumulator", GMLP_ERR_BUILD},
        {"8.0", "sm_90", "\t// gmlp.wgmma.v1 mma m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 0, 0 x\n",
         "text after the operands", GMLP_ERR_BUILD},
        {"8.0", "sm_90", "\t// gmlp.wgmma.v1 wait 8\n", "a wait past 7", GMLP_ERR_BUILD},
        {"8.0", "sm_90", "\t// gmlp.wgmma.v1 proxy all\n", "text after proxy", GMLP_ERR_BUILD},
        {"8.0", "sm_90", "\t// gmlp.wgmma.v1 arrive\n", "an unknown verb", GMLP_ERR_BUILD},
        {"8.0", "sm_90", "\t// gmlp.wgmma.v2 fence\n", "a marker of another splice's version", GMLP_ERR_BUILD},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out = NULL;
        size_t mmas;
        char body[512];
        /* each refusal beside a good mma, so that nothing else is missing */
        snprintf(body, sizeof body, "%s%s", cases[i].body, strcmp(cases[i].body, mma8) ? mma8 : "");
        if (i < 2) /* the first two: no mma at all */
            snprintf(body, sizeof body, "%s", cases[i].body);
        gmlp_status st = splice(cases[i].version, cases[i].target, body, &out, &mmas);
        CHECK(st == cases[i].want, "%s: status %d, want %d", cases[i].why, (int)st, (int)cases[i].want);
        free(out);
    }
    /* a marker before the header's .target */
    gmlp_error err = {0};
    static const char early[] = ".version 8.0\n// gmlp.wgmma.v1 fence\n.target sm_90\n";
    char *out = NULL;
    size_t n, mmas;
    CHECK(gmlp_wgmma_splice(&err, early, sizeof early - 1, &out, &n, &mmas) == GMLP_ERR_BUILD && !out,
          "a marker before .target spliced");
}

static int splice_file(const char *in_path, const char *out_path)
{
    FILE *f = fopen(in_path, "rb");
    if (!f) {
        printf("FAIL: cannot read %s\n", in_path);
        return 1;
    }
    static char buf[1 << 22];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    gmlp_error err = {0};
    char *out;
    size_t len, mmas;
    if (gmlp_wgmma_splice(&err, buf, n, &out, &len, &mmas) != GMLP_OK) {
        printf("FAIL: %s\n", err.msg);
        return 1;
    }
    FILE *g = fopen(out_path, "wb");
    const int ok = g && fwrite(out, 1, len, g) == len;
    if (g)
        fclose(g);
    free(out);
    printf("%zu\n", mmas);
    return ok ? 0 : 1;
}

/* The splice as the program builder's rewrite: the spliced text with its
 * NUL (NVIDIA's loader takes PTX as a C string), accepted as a cached
 * binary; its input, unspliced, refused as one */
static void test_rewrite(void)
{
    gmlp_error err = {0};
    char *in = ptx_of("8.0", "sm_90, texmode_independent", mma8), *out = NULL;
    size_t n = 0;
    CHECK(gmlp_wgmma_rewrite.rewrite(&err, in, strlen(in), &out, &n) == GMLP_OK && out && n == strlen(out) + 1,
          "the rewrite: %s, %zu bytes for %zu characters", err.msg, n, out ? strlen(out) : 0);
    CHECK(out && gmlp_wgmma_rewrite.accepts(out, n), "the rewritten PTX not accepted from the cache");
    CHECK(!gmlp_wgmma_rewrite.accepts(in, strlen(in)), "unspliced PTX accepted from the cache");
    CHECK(gmlp_wgmma_rewrite.tag && strstr(gmlp_wgmma_rewrite.tag, "v1"), "the rewrite's tag names no version");
    free(in);
    free(out);
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--splice"))
        return splice_file(argv[2], argv[3]);
    test_spliced();
    test_refusals();
    test_rewrite();
    return check_summary("test_wgmma_splice");
}
