/* Writes every OpenCL program the library may build into DIR, as the library
 * builds it (prelude included), and prints one line per variant: "FILE
 * OPTIONS" with FILE in DIR ("FILE@nvidia": for NVIDIA targets only).  The portability suite compiles these offline,
 * so it reads the variants from the library itself (gmlp_diag.h), never from
 * its sources.  Each further FILE named (a solo source the list leaves out,
 * such as the tensor-core gemm_mma.cl) is written into DIR as well.
 *   kernel_programs DIR [FILE...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmlp_diag.h"

/* The program of solo file name (or "shared") into dir, as NAME.cl; 1 on failure. */
static int write_program(const char *dir, const char *name)
{
    char path[4096];
    size_t len = gmlp_diag_program_source(name, NULL, 0);
    if (!len) {
        fprintf(stderr, "kernel_programs: the library has no program %s\n", name);
        return 1;
    }
    char *src = malloc(len + 1);
    gmlp_diag_program_source(name, src, len + 1);
    snprintf(path, sizeof path, "%s/%s%s", dir, name, strstr(name, ".cl") ? "" : ".cl");
    FILE *f = fopen(path, "w");
    int bad = !src || !f || fwrite(src, 1, len, f) != len;
    if (f && fclose(f))
        bad = 1;
    if (bad)
        fprintf(stderr, "kernel_programs: cannot write %s\n", path);
    free(src);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: kernel_programs DIR [FILE...]\n");
        return 2;
    }
    size_t need = gmlp_diag_programs(NULL, 0);
    char *list = malloc(need + 1);
    gmlp_diag_programs(list, need + 1);
    int rc = 0;
    for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
        char name[64];
        const char *options = strchr(line, ' ');
        /* the source of "gemm_tiled.cl@nvidia" (a variant for NVIDIA only) is gemm_tiled.cl */
        size_t len_name = options ? (size_t)(options - line) : strlen(line), at = strcspn(line, "@");
        snprintf(name, sizeof name, "%.*s", (int)(at < len_name ? at : len_name), line);
        const char *target = at < len_name ? line + at : "";
        rc |= write_program(argv[1], name);
        printf("%s%s%.*s%s\n", name, strstr(name, ".cl") ? "" : ".cl", (int)(len_name - strlen(name)), target,
               options ? options : "");
    }
    free(list);
    for (int i = 2; i < argc; i++)
        rc |= write_program(argv[1], argv[i]);
    return rc;
}
