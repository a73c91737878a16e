/* A safetensors file of random weights for a configuration (gmlp_diag.h:
 * benchmarks of standard sizes without downloading them), laid out by the
 * same tensor table that loading validates against. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "model/arch.h"
#include "model/model.h"
#include "model/tensors.h"

static int add_tensor(json_t *hdr, const char *name, const gmlp_config *c, const char *dims, size_t *off)
{
    json_t *shape = json_array();
    size_t numel = 1;
    for (const char *s = dims; *s; s++) {
        long long v = gmlp_spec_dim(c, *s);
        json_array_append_new(shape, json_integer(v));
        numel *= (size_t)v;
    }
    json_t *t = json_pack("{s:s, s:o, s:[I,I]}", "dtype", "F32", "shape", shape, "data_offsets", (json_int_t)*off,
                          (json_int_t)(*off + numel * 4));
    *off += numel * 4;
    return t && json_object_set_new(hdr, name, t) == 0;
}

/* splitmix64, as in lib/sample: any seed gives a full-period stream. */
static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

gmlp_status gmlp_random_model(const gmlp_config *c, uint64_t seed, void **data, size_t *size, gmlp_error *err)
{
    *data = NULL;
    *size = 0;
    json_t *hdr = json_object();
    size_t off = 0;
    int ok = hdr != NULL;
    char name[256], img[32], patch[32];
    for (const gmlp_tensor_spec *s = gmlp_model_specs(c); ok && s->leaf; s++)
        if (gmlp_spec_present(c, s))
            ok = add_tensor(hdr, s->leaf, c, s->dims, &off);
    for (int l = 0; ok && l < c->depth; l++)
        for (const gmlp_tensor_spec *s = gmlp_block_specs(c); ok && s->leaf; s++)
            if (gmlp_spec_present(c, s)) {
                gmlp_tensor_name(c, name, sizeof name, l, s->leaf);
                ok = add_tensor(hdr, name, c, s->dims, &off);
            }
    snprintf(img, sizeof img, "%d,%d", c->img_h, c->img_w);
    snprintf(patch, sizeof patch, "%d,%d", c->patch_h, c->patch_w);
    /* gmlp.arch, and what the tensors cannot tell: the LM's causality, a
     * vision model's image size and gMLPVision's (maybe non-square) patch */
    const gmlp_arch_desc *a = gmlp_arch_of(c);
    json_t *meta = json_pack("{s:s, s:s}", "gmlp.arch", a->name, a->lm ? "gmlp.causal" : "gmlp.img_size",
                             a->lm ? (c->causal ? "true" : "false") : img);
    if (!meta || (a->patch_in_metadata && json_object_set_new(meta, "gmlp.patch_size", json_string(patch))))
        ok = 0;
    if (ok)
        ok = json_object_set_new(hdr, "__metadata__", meta) == 0; /* takes meta, also on failure */
    else
        json_decref(meta);
    char *text = ok ? json_dumps(hdr, JSON_COMPACT) : NULL;
    json_decref(hdr);
    size_t hlen = text ? strlen(text) : 0;
    unsigned char *buf = text ? gmlp_malloc(8 + hlen + off) : NULL;
    if (!buf) {
        free(text);
        return gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "out of host memory writing a random model");
    }
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
    memcpy(buf + 8, text, hlen);
    free(text);
    for (size_t i = 0; i < off / 4; i++) {
        float v = ((float)(next(&seed) >> 40) / 16777216.0f - 0.5f) * 0.1f;
        memcpy(buf + 8 + hlen + 4 * i, &v, 4); /* may be unaligned: bytewise */
    }
    *data = buf;
    *size = 8 + hlen + off;
    return GMLP_OK;
}
