/* The library's file-system twins (lib/core/portable.c), run on Linux and, in the Windows build, under
 * Wine: the kernel cache's folders and its and the tuning file's atomic replacement of a file. */
#include <errno.h>
#include <unistd.h>

#include "check.h"
#include "core/portable.h"

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
}

static int holds(const char *path, const char *text)
{
    char buf[64] = "";
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    return n == strlen(text) && !memcmp(buf, text, n);
}

int main(int argc, char **argv)
{
    CHECK(argc == 2, "usage: test_portable SCRATCH_FOLDER");
    if (argc != 2)
        return 1;
    char dir[1024], sub[1100], a[1200], b[1200];
    snprintf(dir, sizeof dir, "%s", argv[1]);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(a, sizeof a, "%s/a.tmp", sub);
    snprintf(b, sizeof b, "%s/b", sub);
    remove(a);
    remove(b);
    rmdir(sub);
    rmdir(dir);

    struct stat sb;
    CHECK(gmlp_mkdir(dir) == 0 && gmlp_mkdir(sub) == 0, "mkdir %s: %s", sub, strerror(errno));
    CHECK(gmlp_mkdir(sub) != 0 && errno == EEXIST, "a second mkdir of %s: errno %d", sub, errno);
    CHECK(stat(sub, &sb) == 0 && S_ISDIR(sb.st_mode), "%s is no folder", sub);
    CHECK(gmlp_lstat(b, &sb) != 0 && errno == ENOENT, "lstat of the missing %s: errno %d", b, errno);

    put(a, "first");
    CHECK(gmlp_rename(a, b) == 0 && holds(b, "first"), "rename onto a new file");
    CHECK(gmlp_lstat(a, &sb) != 0 && errno == ENOENT, "%s is still there after its rename", a);
    put(a, "second, longer");
    CHECK(gmlp_rename(a, b) == 0 && holds(b, "second, longer"), "rename replacing an existing file");
    CHECK(gmlp_rename(a, b) != 0 && errno == ENOENT && holds(b, "second, longer"),
          "rename of a missing file: errno %d", errno);
    CHECK(gmlp_lstat(b, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 14, "lstat of %s", b);

    remove(b);
    rmdir(sub);
    rmdir(dir);
    return check_summary("portable");
}
