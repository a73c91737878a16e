/* A libFuzzer target's LLVMFuzzerTestOneInput over files, in an ordinary
 * build (no clang): the seeds and every crash the fuzzer found, kept as
 * regressions beside them.  The target aborts on what it must not see.
 *   replay FILE|FOLDER...   each file of a folder, in name order */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    size_t size = 0, cap = 0, got;
    if (!f)
        return 0;
    do {
        if (size == cap && !(data = realloc(data, cap = cap ? 2 * cap : 65536)))
            abort();
        got = fread(data + size, 1, cap - size, f);
        size += got;
    } while (got);
    fclose(f);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 1;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
    int n = 0;
    for (int i = 1; i < argc; i++) {
        struct dirent **names;
        const int k = scandir(argv[i], &names, NULL, by_name);
        if (k < 0 && !run(argv[i])) {
            fprintf(stderr, "replay: cannot read %s\n", argv[i]);
            return 1;
        }
        for (int j = 0; j < k; j++) {
            char path[4096];
            if (names[j]->d_name[0] != '.' &&
                snprintf(path, sizeof path, "%s/%s", argv[i], names[j]->d_name) < (int)sizeof path)
                n += run(path);
            free(names[j]);
        }
        if (k >= 0)
            free(names);
        else
            n++;
    }
    printf("replay: %d input(s), none refused by the target's checks\n", n);
    return n ? 0 : 1;
}
