/* g-mlp-pytorch's spatial matrices (LM and gMLPVision), built once at load
 * time so that every pass is a plain GEMM: the "circulant" construction and
 * the causal mask. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "model/model.h"
#include "model/tensors.h"

#define SGU "$sgu." /* in the gMLPBlock (gmlp_tensor_name) */

static const gmlp_st_tensor *find(const gmlp_model *m, const gmlp_st_file *f, int l, const char *leaf)
{
    char name[256];
    gmlp_tensor_name(&m->cfg, name, sizeof name, l, leaf);
    return gmlp_st_find(f, name); /* presence and shape were validated */
}

/* M[h, i, j] = w[h, S-1-(i-j)] * pos_x[h, i] * pos_y[h, j] for j <= i, else 0:
 * what SpatialGatingUnit's pad / repeat / reshape / slice sequence yields. */
static void circulant(float *out, const float *w, const float *px, const float *py, int heads, int n)
{
    for (int h = 0; h < heads; h++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                out[((size_t)h * n + i) * n + j] =
                    j <= i ? w[(size_t)h * n + n - 1 - (i - j)] * px[(size_t)h * n + i] * py[(size_t)h * n + j] : 0.0f;
}

gmlp_status gmlp_layers_upload_spatial(gmlp_model *m, const gmlp_st_file *f)
{
    const int heads = m->cfg.heads, n = m->cfg.seq_len;
    const size_t numel = (size_t)heads * n * n, vec = (size_t)heads * n;
    float *mat = gmlp_malloc(numel * sizeof *mat), *tmp = gmlp_malloc(3 * vec * sizeof *tmp);
    gmlp_status st = GMLP_OK;
    if (!mat || !tmp)
        st = gmlp_fail(&m->ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory building %zu-float spatial matrices",
                           numel);
    for (int l = 0; st == GMLP_OK && l < m->cfg.depth; l++) {
        if (m->cfg.circulant) {
            gmlp_st_to_f32(find(m, f, l, SGU "weight"), tmp);
            gmlp_st_to_f32(find(m, f, l, SGU "circulant_pos_x"), tmp + vec);
            gmlp_st_to_f32(find(m, f, l, SGU "circulant_pos_y"), tmp + 2 * vec);
            circulant(mat, tmp, tmp + vec, tmp + 2 * vec, heads, n);
        } else {
            gmlp_st_to_f32(find(m, f, l, SGU "weight"), mat);
        }
        /* causal: position i mixes only positions j <= i; the slice to n
         * tokens is then just the top-left corner */
        for (size_t h = 0; m->cfg.causal && h < (size_t)heads; h++)
            for (int i = 0; i < n; i++)
                memset(mat + (h * n + i) * n + i + 1, 0, (size_t)(n - 1 - i) * sizeof *mat);
        char name[256];
        gmlp_tensor_name(&m->cfg, name, sizeof name, l, SGU "weight");
        st = gmlp_model_upload(m, mat, numel, 1, name, &m->blocks[l].sgu_w);
    }
    free(mat);
    free(tmp);
    return st;
}
