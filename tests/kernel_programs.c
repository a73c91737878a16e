/* Writes every OpenCL program the library may build into DIR, as the library
 * builds it (prelude included), and prints one line per variant: "FILE
 * OPTIONS" with FILE in DIR ("FILE@nvidia": for NVIDIA targets only).  The portability suite compiles these offline,
 * so it reads the variants from the library itself (gmlp_diag.h), never from
 * its sources. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmlp_diag.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: kernel_programs DIR\n");
        return 2;
    }
    size_t need = gmlp_diag_programs(NULL, 0);
    char *list = malloc(need + 1);
    gmlp_diag_programs(list, need + 1);
    int rc = 0;
    for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
        char name[64], path[4096];
        const char *options = strchr(line, ' ');
        /* the source of "gemm_tiled.cl@nvidia" (a variant for NVIDIA only) is gemm_tiled.cl */
        size_t len_name = options ? (size_t)(options - line) : strlen(line), at = strcspn(line, "@");
        snprintf(name, sizeof name, "%.*s", (int)(at < len_name ? at : len_name), line);
        const char *target = at < len_name ? line + at : "";
        size_t len = gmlp_diag_program_source(name, NULL, 0);
        char *src = malloc(len + 1);
        gmlp_diag_program_source(name, src, len + 1);
        snprintf(path, sizeof path, "%s/%s%s", argv[1], name, strstr(name, ".cl") ? "" : ".cl");
        FILE *f = fopen(path, "w");
        if (!f || fwrite(src, 1, len, f) != len || fclose(f)) {
            fprintf(stderr, "kernel_programs: cannot write %s\n", path);
            rc = 1;
        }
        printf("%s%s%.*s%s\n", name, strstr(name, ".cl") ? "" : ".cl", (int)(len_name - strlen(name)), target,
               options ? options : "");
        free(src);
    }
    free(list);
    return rc;
}
