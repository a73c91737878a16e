/* Loading a model: file → validated config → weights on the device. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/model.h"
#include "ops/ops.h"
#include "model/tensors.h"

static cl_mem *field(void *base, size_t off)
{
    return (cl_mem *)((char *)base + off);
}

static gmlp_status upload(gmlp_model *m, const gmlp_st_file *f, int l, const gmlp_tensor_spec *spec, cl_mem *dst)
{
    char name[256];
    gmlp_tensor_name(&m->cfg, name, sizeof name, l, spec->leaf);
    const gmlp_st_tensor *t = gmlp_st_find(f, name);
    float *host = malloc(t->numel ? t->numel * sizeof(float) : sizeof(float));
    if (!host)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_HOST_MEMORY, "out of host memory converting '%s'", name);
    gmlp_st_to_f32(t, host);
    gmlp_status st = gmlp_model_upload(m, host, t->numel, spec->gemm, name, dst);
    free(host);
    return st;
}

static int uploaded(const gmlp_config *cfg, const gmlp_tensor_spec *s)
{
    return s->field != GMLP_NO_FIELD && gmlp_spec_present(cfg, s);
}

static gmlp_status upload_all(gmlp_model *m, const gmlp_st_file *f)
{
    m->blocks = calloc((size_t)m->cfg.depth, sizeof *m->blocks);
    if (!m->blocks)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_HOST_MEMORY, "out of host memory for %d blocks", m->cfg.depth);
    for (const gmlp_tensor_spec *s = gmlp_model_specs(&m->cfg); s->leaf; s++)
        if (uploaded(&m->cfg, s))
            GMLP_TRY(upload(m, f, -1, s, field(m, s->field)));
    for (int l = 0; l < m->cfg.depth; l++)
        for (const gmlp_tensor_spec *s = gmlp_block_specs(&m->cfg); s->leaf; s++)
            if (uploaded(&m->cfg, s))
                GMLP_TRY(upload(m, f, l, s, field(&m->blocks[l], s->field)));
    return m->cfg.arch == GMLP_ARCH_LM ? gmlp_lm_upload_spatial(m, f) : GMLP_OK;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

static gmlp_status copy_metadata(gmlp_model *m, const gmlp_st_file *f)
{
    if (f->n_meta) {
        m->meta_keys = calloc(f->n_meta, sizeof *m->meta_keys);
        m->meta_values = calloc(f->n_meta, sizeof *m->meta_values);
        if (!m->meta_keys || !m->meta_values)
            return gmlp_ctx_fail(m->ctx, GMLP_ERR_HOST_MEMORY, "out of host memory copying metadata");
        m->n_meta = f->n_meta; /* entries start NULL, so a partial copy frees cleanly */
    }
    for (size_t i = 0; i < f->n_meta; i++) {
        m->meta_keys[i] = dup_str(f->meta_keys[i]);
        m->meta_values[i] = dup_str(f->meta_values[i]);
        if (!m->meta_keys[i] || !m->meta_values[i])
            return gmlp_ctx_fail(m->ctx, GMLP_ERR_HOST_MEMORY, "out of host memory copying metadata");
    }
    const char *labels = gmlp_model_metadata(m, "gmlp.labels");
    if (!labels || m->cfg.num_classes == 0)
        return GMLP_OK;
    /* gmlp_config_infer checked there is one name per class */
    m->labels = calloc((size_t)m->cfg.num_classes, sizeof *m->labels);
    if (!m->labels)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_HOST_MEMORY, "out of host memory copying labels");
    const char *p = labels;
    for (int i = 0; i < m->cfg.num_classes; i++) {
        size_t len = strcspn(p, "\n");
        if (!(m->labels[i] = malloc(len + 1)))
            return gmlp_ctx_fail(m->ctx, GMLP_ERR_HOST_MEMORY, "out of host memory copying labels");
        memcpy(m->labels[i], p, len);
        m->labels[i][len] = 0;
        p += len + (p[len] == '\n');
    }
    return GMLP_OK;
}

/* Builds (or takes from the kernel cache) every GEMM-kernel variant the
 * forward passes may pick, so that no later call compiles anything: the
 * weights as A or B operand (half or float) and activations on both sides,
 * each tiling.  With CLBlast for float GEMMs, only the program that holds
 * the stand-alone epilogue. */
static gmlp_status prepare_gemms(gmlp_model *m)
{
    int half = m->cfg.weights == GMLP_WEIGHTS_F16;
    const gmlp_gemm_kernel *g;
    if (!half && m->ctx->gemm_backend == GMLP_GEMM_CLBLAST)
        return gmlp_gemm_kernel_get(m->ctx, 0, 0, GMLP_TILES_SMALL, &g);
    const int types[][2] = {{0, 0}, {1, 0}, {0, 1}}; /* {a_half, b_half} */
    for (int t = 0; t < (half ? 3 : 1); t++)
        for (int size = 0; size < 3; size++)
            GMLP_TRY(gmlp_gemm_kernel_get(m->ctx, types[t][0], types[t][1], (gmlp_tiles)size, &g));
    return GMLP_OK;
}

static gmlp_status load(gmlp_model *m, const void *data, size_t size, const gmlp_load_options *opts)
{
    gmlp_st_file f;
    gmlp_context *ctx = m->ctx;
    GMLP_TRY(gmlp_st_parse(data, size, &f, ctx->err, sizeof ctx->err));
    gmlp_status st = gmlp_config_infer(&f, &m->cfg, ctx->err, sizeof ctx->err);
    m->cfg.weights = opts->weights;
    if (st == GMLP_OK)
        st = gmlp_config_check_tensors(&f, &m->cfg, ctx->err, sizeof ctx->err);
    if (st == GMLP_OK) {
        for (size_t i = 0; i < f.n_tensors; i++)
            m->cfg.num_params += f.tensors[i].numel;
        st = copy_metadata(m, &f);
    }
    if (st == GMLP_OK)
        st = upload_all(m, &f);
    gmlp_st_free(&f);
    if (st == GMLP_OK)
        st = prepare_gemms(m);
    return st;
}

static void destroy(gmlp_model *m);

static gmlp_status load_common(gmlp_context *ctx, const void *data, size_t size, const gmlp_load_options *opts,
                               gmlp_model **out)
{
    gmlp_model *m = calloc(1, sizeof *m);
    if (!m)
        return gmlp_ctx_fail(ctx, GMLP_ERR_HOST_MEMORY, "out of host memory");
    m->ctx = ctx;
    gmlp_status st = load(m, data, size, opts);
    if (st != GMLP_OK) {
        destroy(m);
        return st;
    }
    *out = m;
    return GMLP_OK;
}

void gmlp_load_options_default(gmlp_load_options *opts)
{
    if (opts)
        opts->weights = GMLP_WEIGHTS_F32;
}

/* NULL opts: the defaults, into *buf. */
static const gmlp_load_options *check_options(gmlp_context *ctx, const char *fn, const gmlp_load_options *opts,
                                              gmlp_load_options *buf)
{
    if (!opts) {
        gmlp_load_options_default(buf);
        return buf;
    }
    if (opts->weights != GMLP_WEIGHTS_F32 && opts->weights != GMLP_WEIGHTS_F16) {
        gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "%s: unknown weight type %d (GMLP_WEIGHTS_F32 or _F16)", fn,
                      (int)opts->weights);
        return NULL;
    }
    return opts;
}

gmlp_status gmlp_model_load_memory_ex(gmlp_context *ctx, const void *data, size_t size, const gmlp_load_options *opts,
                                      gmlp_model **out)
{
    if (out)
        *out = NULL;
    if (!ctx)
        return gmlp_errf(gmlp_thread_error(), GMLP_ERRMSG_SIZE, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_model_load_memory: ctx is NULL");
    if (!out || (!data && size))
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "gmlp_model_load_memory: %s is NULL",
                             out ? "data" : "out");
    gmlp_load_options defaults;
    if (!(opts = check_options(ctx, "gmlp_model_load_memory", opts, &defaults)))
        return GMLP_ERR_INVALID_ARGUMENT;
    pthread_mutex_lock(&ctx->lock);
    gmlp_status st = load_common(ctx, data ? data : "", size, opts, out);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

gmlp_status gmlp_model_load_memory(gmlp_context *ctx, const void *data, size_t size, gmlp_model **out)
{
    return gmlp_model_load_memory_ex(ctx, data, size, NULL, out);
}

/* Whole file into memory; a read error, not a crash, if it changes under us. */
static gmlp_status read_file(gmlp_context *ctx, const char *path, unsigned char **data, size_t *size)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return gmlp_ctx_fail(ctx, GMLP_ERR_IO, "cannot read '%s': not a regular file", path);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return gmlp_ctx_fail(ctx, GMLP_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    gmlp_status st = GMLP_OK;
    long len = -1;
    if (fseek(fp, 0, SEEK_END) == 0)
        len = ftell(fp);
    if (len < 0 || fseek(fp, 0, SEEK_SET) != 0)
        st = gmlp_ctx_fail(ctx, GMLP_ERR_IO, "cannot determine the size of '%s'", path);
    else if (!(*data = malloc(len ? (size_t)len : 1)))
        st = gmlp_ctx_fail(ctx, GMLP_ERR_HOST_MEMORY, "out of host memory reading '%s' (%ld bytes)", path, len);
    else if (fread(*data, 1, (size_t)len, fp) != (size_t)len)
        st = gmlp_ctx_fail(ctx, GMLP_ERR_IO, "cannot read '%s': %s", path, ferror(fp) ? strerror(errno) : "short read");
    fclose(fp);
    if (st != GMLP_OK) {
        free(*data);
        *data = NULL;
    }
    *size = (size_t)len;
    return st;
}

gmlp_status gmlp_model_load_ex(gmlp_context *ctx, const char *path, const gmlp_load_options *opts, gmlp_model **out)
{
    if (out)
        *out = NULL;
    if (!ctx)
        return gmlp_errf(gmlp_thread_error(), GMLP_ERRMSG_SIZE, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_model_load: ctx is NULL");
    if (!path || !out)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "gmlp_model_load: %s is NULL", path ? "out" : "path");
    gmlp_load_options defaults;
    if (!(opts = check_options(ctx, "gmlp_model_load", opts, &defaults)))
        return GMLP_ERR_INVALID_ARGUMENT;
    pthread_mutex_lock(&ctx->lock);
    unsigned char *data = NULL;
    size_t size = 0;
    gmlp_status st = read_file(ctx, path, &data, &size);
    if (st == GMLP_OK) {
        st = load_common(ctx, data, size, opts, out);
        if (st != GMLP_OK) {
            /* name the file in front of the detail */
            char detail[GMLP_ERRMSG_SIZE];
            memcpy(detail, ctx->err, sizeof detail);
            if (snprintf(ctx->err, sizeof ctx->err, "%s: %s", path, detail) >= (int)sizeof ctx->err)
                ctx->err[sizeof ctx->err - 1] = 0; /* truncated: still a valid string */
        }
    }
    free(data);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

gmlp_status gmlp_model_load(gmlp_context *ctx, const char *path, gmlp_model **out)
{
    return gmlp_model_load_ex(ctx, path, NULL, out);
}

static void release_fields(gmlp_model *m, void *base, const gmlp_tensor_spec *specs)
{
    for (const gmlp_tensor_spec *s = specs; s->leaf; s++)
        if (s->field != GMLP_NO_FIELD)
            gmlp_buffer_release(m->ctx, field(base, s->field));
}

/* Frees m; the caller holds the context's lock. */
static void destroy(gmlp_model *m)
{
    gmlp_workspace_free(m);
    gmlp_lm_workspace_free(m);
    release_fields(m, m, gmlp_model_specs(&m->cfg));
    for (int l = 0; m->blocks && l < m->cfg.depth; l++) {
        release_fields(m, &m->blocks[l], gmlp_block_specs(&m->cfg));
        gmlp_buffer_release(m->ctx, &m->blocks[l].sgu_w); /* the LM builds it outside the specs */
    }
    free(m->blocks);
    for (size_t i = 0; i < m->n_meta; i++) {
        free(m->meta_keys[i]);
        free(m->meta_values[i]);
    }
    free(m->meta_keys);
    free(m->meta_values);
    for (int i = 0; m->labels && i < m->cfg.num_classes; i++)
        free(m->labels[i]);
    free(m->labels);
    free(m);
}

void gmlp_model_free(gmlp_model *m)
{
    if (!m)
        return;
    gmlp_context *ctx = m->ctx;
    pthread_mutex_lock(&ctx->lock);
    destroy(m);
    pthread_mutex_unlock(&ctx->lock);
}

gmlp_status gmlp_model_config(const gmlp_model *m, gmlp_config *out)
{
    if (!m || !out)
        return gmlp_errf(gmlp_thread_error(), GMLP_ERRMSG_SIZE, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_model_config: %s is NULL", m ? "out" : "model");
    *out = m->cfg;
    return GMLP_OK;
}

const char *gmlp_model_metadata(const gmlp_model *m, const char *key)
{
    for (size_t i = 0; m && key && i < m->n_meta; i++)
        if (!strcmp(m->meta_keys[i], key))
            return m->meta_values[i];
    return NULL;
}

const char *gmlp_model_metadata_key(const gmlp_model *m, size_t i)
{
    return m && i < m->n_meta ? m->meta_keys[i] : NULL;
}

const char *gmlp_model_label(const gmlp_model *m, int i)
{
    return m && m->labels && i >= 0 && i < m->cfg.num_classes ? m->labels[i] : NULL;
}
