/* Writes every OpenCL program the library may build into DIR, as the library
 * builds it (prelude included), and prints one line per variant: "FILE
 * OPTIONS" with FILE in DIR ("FILE@TARGET": for NVIDIA targets only, or for
 * the devices of one matrix engine).  The portability suite compiles these
 * offline, so it reads the variants from the library itself (gmlp_diag.h),
 * never from its sources.
 *   kernel_programs DIR
 *   kernel_programs --engines   the matrix engines' variants of that list, a
 *       line each: "ENGINE ARCHS TILING DEFAULT PRECISION A B C TB STAGES
 *       LDSM COUNT LABEL... | FILE OPTIONS" (ARCHS the architectures that
 *       have the engine, comma-separated; DEFAULT 1 where a default row names
 *       the tiling; PRECISION, A, B, C the kernel_abi.h codes; COUNT the
 *       instructions one slice issues per sub-group, all unrolled; LABEL the
 *       library's) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmlp_diag.h"
#include "ops/gemm_variant.h"

static void engine_line(void *user, const gmlp_tiling *t, const gmlp_gemm_variant *form, const char *target)
{
    (void)user;
    const gmlp_engine *e = gmlp_engine_of(t->needs);
    if (!e)
        return;
    const gmlp_gemm_variant v = gmlp_gemm_variant_on(form, t);
    char defs[480], label[200], archs[200];
    snprintf(archs, sizeof archs, "%s", e->archs);
    for (char *c = archs; (c = strchr(c, ' ')) != NULL;)
        *c = ',';
    gmlp_gemm_variant_defines(&v, t, 1, defs, sizeof defs);
    gmlp_gemm_variant_label(&v, t, label, sizeof label);
    const int count = t->wm * t->wn * e->lanes / (e->m * e->n) * (t->tk / e->k[v.precision]);
    printf("%s %s %s %d %d %d %d %d %d %d %d %d %s | %s %s\n", target, archs, t->name, gmlp_gemm_tiling_is_default(t),
           v.precision, v.a, v.b, v.c, v.tb, t->stages, t->ldsm, count, label, t->kernel->file, defs);
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
        fprintf(stderr, "usage: kernel_programs DIR | --engines\n");
        return 2;
    }
    if (!strcmp(argv[1], "--engines")) {
        gmlp_gemm_programs(engine_line, NULL);
        return 0;
    }
    size_t need = gmlp_diag_programs(NULL, 0);
    char *list = malloc(need + 1);
    gmlp_diag_programs(list, need + 1);
    int rc = 0;
    char written[64] = "";
    for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
        char name[64];
        const char *options = strchr(line, ' ');
        /* the source of "gemm_tiled.cl@nvidia" (a variant for NVIDIA only) is gemm_tiled.cl */
        size_t len_name = options ? (size_t)(options - line) : strlen(line), at = strcspn(line, "@");
        snprintf(name, sizeof name, "%.*s", (int)(at < len_name ? at : len_name), line);
        const char *target = at < len_name ? line + at : "";
        if (strcmp(name, written)) /* a program's variants are listed together */
            rc |= write_program(argv[1], name);
        snprintf(written, sizeof written, "%s", name);
        printf("%s%s%.*s%s\n", name, strstr(name, ".cl") ? "" : ".cl", (int)(len_name - strlen(name)), target,
               options ? options : "");
    }
    free(list);
    return rc;
}
