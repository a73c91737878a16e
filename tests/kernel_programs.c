/* Writes every OpenCL program the library may build into DIR, as the library
 * builds it (prelude included), and prints one line per variant: "FILE
 * OPTIONS" with FILE in DIR ("FILE@nvidia": for NVIDIA targets only).  The portability suite compiles these offline,
 * so it reads the variants from the library itself (gmlp_diag.h), never from
 * its sources.  Each further FILE named (a solo source the list leaves out,
 * such as the tensor-core gemm_mma.cl) is written into DIR as well.
 *   kernel_programs DIR [FILE...]
 *   kernel_programs --mma   the tensor-core tilings (lib/ops/gemm_tilings.c's
 *                           mma rows), a line per tiling and precision it runs:
 *                           "PRECISION TM TN TK WM WN STAGES LDSM DEFAULT FLOATS"
 *                           (DEFAULT 1 where a default row names the tiling;
 *                           FLOATS 1 where float operands, in any layout, fit
 *                           NVIDIA's 48 KiB of local memory: else the host
 *                           builds it for 16-bit operands only) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmlp_diag.h"
#include "ops/gemm_tilings.h"

/* kernel_programs --mma */
static int list_mma(void)
{
    size_t n;
    const gmlp_tiling *all = gmlp_gemm_tilings(&n);
    for (const gmlp_tiling *t = all; t < all + n; t++)
        for (int p = GMLP_GEMM_TF32; t->needs == GMLP_ENGINE_MMA_SYNC && p < GMLP_GEMM_PRECISIONS; p++) {
            if (!gmlp_gemm_tiling_runs(t, (gmlp_gemm_precision)p))
                continue;
            int floats = 1;
            for (int along = 0; along < 4; along++) {
                const gmlp_gemm_operands o = {GMLP_ELEM_F32, GMLP_ELEM_F32, along & 1, along >> 1,
                                              (gmlp_gemm_precision)p};
                floats &= gmlp_gemm_tiling_form_bytes(t, &o) <= 48 * 1024;
            }
            printf("%d %d %d %d %d %d %d %d %d %d\n", p, t->tm, t->tn, t->tk, t->wm, t->wn, t->stages, t->ldsm,
                   gmlp_gemm_tiling_is_default(t), floats);
        }
    return 0;
}

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
        fprintf(stderr, "usage: kernel_programs DIR [FILE...] | --mma\n");
        return 2;
    }
    if (!strcmp(argv[1], "--mma"))
        return list_mma();
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
