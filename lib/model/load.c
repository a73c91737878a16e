/* Loading a model: file → validated config → weights on the device; and
 * what can change after: the preprocessing values (gmlp_model_override). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "model/arch.h"
#include "model/model.h"
#include "ops/ops.h"
#include "model/tensors.h"

static cl_mem *field(void *base, size_t off)
{
    return (cl_mem *)((char *)base + off);
}

/* A linear weight (out x in, *numel values) as in x out: op(B) contiguous
 * along n, read by the direct kernel's outer products; as pairs, in's
 * pairs adjacent per column (gmlp_view.pairs), an odd in's last pair
 * padded with a zero: *numel grows by out (NULL: out of host memory). */
static float *transposed(const gmlp_model *m, const float *w, size_t *numel, const gmlp_tensor_spec *spec)
{
    const size_t out = (size_t)gmlp_spec_dim(&m->cfg, spec->dims[0]), in = *numel / out;
    const bool pairs = m->linear == GMLP_LINEAR_PAIRS;
    const size_t rows = pairs ? (in + 1) / 2 * 2 : in;
    float *t = gmlp_calloc(rows * out + 1, sizeof *t);
    for (size_t o = 0; t && o < out; o++)
        for (size_t q = 0; q < in; q++)
            t[pairs ? (q / 2 * out + o) * 2 + q % 2 : q * out + o] = w[o * in + q];
    *numel = rows * out;
    return t;
}

static gmlp_status upload(gmlp_model *m, const gmlp_st_file *f, int l, const gmlp_tensor_spec *spec, cl_mem *dst)
{
    char name[256], sname[256];
    gmlp_tensor_name(&m->cfg, name, sizeof name, l, spec->leaf);
    const gmlp_st_tensor *t = gmlp_st_find(f, name), *s = NULL;
    const char *scale = gmlp_spec_scale(spec);
    if (scale) { /* validated: d values, d dividing numel */
        gmlp_tensor_name(&m->cfg, sname, sizeof sname, l, scale);
        s = gmlp_st_find(f, sname);
    }
    size_t ns = s ? s->numel : 0;
    float *host = gmlp_malloc((t->numel + ns) * sizeof(float) + sizeof(float));
    if (!host)
        return gmlp_fail(&m->ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory converting '%s'", name);
    gmlp_st_to_f32(t, host);
    if (s) {
        float *by = host + t->numel;
        gmlp_st_to_f32(s, by);
        for (size_t i = 0, per = t->numel / ns; i < t->numel; i++)
            host[i] *= by[i / per];
    }
    size_t numel = t->numel;
    float *kn = (spec->flags & GMLP_SPEC_LINEAR) && m->linear != GMLP_LINEAR_FILE ? transposed(m, host, &numel, spec)
                                                                                  : host;
    gmlp_status st = kn ? gmlp_model_upload(m, kn, numel, spec->flags & GMLP_SPEC_GEMM, name, dst)
                        : gmlp_fail(&m->ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory transposing '%s'", name);
    if (kn != host)
        free(kn);
    free(host);
    return st;
}

static int uploaded(const gmlp_config *cfg, const gmlp_tensor_spec *s)
{
    return s->field != GMLP_NO_FIELD && gmlp_spec_present(cfg, s);
}

static gmlp_status upload_all(gmlp_model *m, const gmlp_st_file *f)
{
    m->blocks = gmlp_calloc((size_t)m->cfg.depth, sizeof *m->blocks);
    if (!m->blocks)
        return gmlp_fail(&m->ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory for %d blocks", m->cfg.depth);
    for (const gmlp_tensor_spec *s = gmlp_model_specs(&m->cfg); s->leaf; s++)
        if (uploaded(&m->cfg, s))
            GMLP_TRY(upload(m, f, -1, s, field(m, s->field)));
    for (int l = 0; l < m->cfg.depth; l++)
        for (const gmlp_tensor_spec *s = gmlp_block_specs(&m->cfg); s->leaf; s++)
            if (uploaded(&m->cfg, s))
                GMLP_TRY(upload(m, f, l, s, field(&m->blocks[l], s->field)));
    return gmlp_arch_of(&m->cfg)->layers ? gmlp_layers_upload_spatial(m, f) : GMLP_OK;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = gmlp_malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

static gmlp_status copy_metadata(gmlp_model *m, const gmlp_st_file *f)
{
    if (f->n_meta) {
        m->meta_keys = gmlp_calloc(f->n_meta, sizeof *m->meta_keys);
        m->meta_values = gmlp_calloc(f->n_meta, sizeof *m->meta_values);
        if (!m->meta_keys || !m->meta_values)
            return gmlp_fail(&m->ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory copying metadata");
        m->n_meta = f->n_meta; /* entries start NULL, so a partial copy frees cleanly */
    }
    for (size_t i = 0; i < f->n_meta; i++) {
        m->meta_keys[i] = dup_str(f->meta_keys[i]);
        m->meta_values[i] = dup_str(f->meta_values[i]);
        if (!m->meta_keys[i] || !m->meta_values[i])
            return gmlp_fail(&m->ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory copying metadata");
    }
    return GMLP_OK;
}

const char *gmlp_model_meta(const gmlp_model *m, const char *key)
{
    for (size_t i = 0; i < m->n_meta; i++)
        if (!strcmp(m->meta_keys[i], key))
            return m->meta_values[i];
    return NULL;
}

static void free_labels(char **labels, int n)
{
    for (int i = 0; labels && i < n; i++)
        free(labels[i]);
    free(labels);
}

/* Length of the label at p, up to its newline, less a CR before it (a list
 * written with CRLF line ends, as the --labels FILE reader takes them). */
static size_t label_len(const char *p)
{
    size_t len = strcspn(p, "\n");
    return len && p[len - 1] == '\r' ? len - 1 : len;
}

/* Replaces m's labels with the newline-separated list (one per class, as
 * counted by the caller). */
static gmlp_status set_labels(gmlp_model *m, const char *list)
{
    const int n = m->cfg.num_classes;
    char **labels = gmlp_calloc((size_t)n, sizeof *labels);
    const char *p = list;
    for (int i = 0; labels && i < n; i++) {
        size_t len = label_len(p);
        if (!(labels[i] = gmlp_malloc(len + 1))) {
            free_labels(labels, n);
            labels = NULL;
            break;
        }
        memcpy(labels[i], p, len);
        labels[i][len] = 0;
        p += strcspn(p, "\n");
        p += *p == '\n';
    }
    if (!labels)
        return gmlp_fail(&m->ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory copying labels");
    free_labels(m->labels, n);
    m->labels = labels;
    return GMLP_OK;
}

/* Whether the first n labels of lists a and b (newline-separated) differ,
 * and where, into buf. */
static int labels_differ(const char *a, const char *b, int n, char *buf, size_t size)
{
    for (int i = 0; i < n; i++) {
        size_t la = label_len(a), lb = label_len(b);
        if (la != lb || memcmp(a, b, la)) {
            snprintf(buf, size, "from class %d on: '%.*s' and '%.*s'", i, (int)(la < 60 ? la : 60), a,
                     (int)(lb < 60 ? lb : 60), b);
            return 1;
        }
        a += strcspn(a, "\n");
        b += strcspn(b, "\n");
        a += *a == '\n';
        b += *b == '\n';
    }
    return 0;
}

/* Into m->conflicts[k]: how gmlp.KEY (meta, the value m->cfg holds) and
 * config.json disagree on key k; left NULL when they agree. */
static gmlp_status note_conflict(gmlp_model *m, const gmlp_hf_config *hf, gmlp_preproc_key k, const char *meta)
{
    char text[512];
    const char *theirs = hf->value[k];
    if (k == GMLP_PK_LABELS) {
        char where[200];
        /* gmlp_config_infer checked that both have one name per class */
        if (!labels_differ(meta, theirs, m->cfg.num_classes, where, sizeof where))
            return GMLP_OK;
        snprintf(text, sizeof text, "gmlp.labels (used) and config.json %s differ %s", hf->key[k], where);
    } else {
        gmlp_config cfg = m->cfg;
        gmlp_error scratch = {.msg = ""};
        /* validated by gmlp_config_infer; only key k's fields change, so equal values compare equal */
        if (gmlp_cfg_set_preproc(&cfg, k, theirs, "config.json", GMLP_SOURCE_CONFIG_JSON, &scratch) != GMLP_OK ||
            !memcmp(&cfg, &m->cfg, sizeof cfg))
            return GMLP_OK;
        snprintf(text, sizeof text, "gmlp.%s '%s' (used) and config.json %s '%s' differ", gmlp_preproc_keys[k], meta,
                 hf->key[k], theirs);
    }
    if (!(m->conflicts[k] = dup_str(text)))
        return gmlp_fail(&m->ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory");
    return GMLP_OK;
}

/* timm warns where it averages a pretrained mean/std for the model's
 * channels (gmlp_cfg_set_preproc did the same): say so on the log. */
static void log_averaged(const gmlp_model *m, gmlp_preproc_key k, const char *json)
{
    const gmlp_arch_desc *a = gmlp_arch_of(&m->cfg);
    const char *value = m->sources[k] == GMLP_SOURCE_CONFIG_JSON ? json
                        : m->sources[k] == GMLP_SOURCE_DEFAULT   ? (k == GMLP_PK_MEAN ? a->mean : a->std)
                                                                 : NULL;
    if (value && gmlp_cfg_norm_averaged(&m->cfg, value))
        gmlp_log(&m->ctx->set.log, GMLP_LOG_INFO,
                 "the %s %s '%s' does not match the model's %d input channel(s): using its average, as timm does",
                 m->sources[k] == GMLP_SOURCE_DEFAULT ? "default" : "config.json", gmlp_preproc_keys[k], value,
                 m->cfg.in_chans);
}

/* Where each preprocessing value came from (the metadata over config.json
 * over the defaults, as gmlp_config_infer applied them), where the two
 * disagree, and the labels of the winner. */
static gmlp_status init_preproc(gmlp_model *m, const gmlp_hf_config *hf)
{
    const char *labels = NULL;
    for (int k = 0; k < GMLP_PK_COUNT; k++) {
        char key[64];
        snprintf(key, sizeof key, "gmlp.%s", gmlp_preproc_keys[k]);
        const char *meta = gmlp_model_meta(m, key), *json = hf ? hf->value[k] : NULL;
        m->sources[k] = meta ? GMLP_SOURCE_METADATA : json ? GMLP_SOURCE_CONFIG_JSON : GMLP_SOURCE_DEFAULT;
        if (meta && json)
            GMLP_TRY(note_conflict(m, hf, (gmlp_preproc_key)k, meta));
        if (k == GMLP_PK_MEAN || k == GMLP_PK_STD)
            log_averaged(m, (gmlp_preproc_key)k, json);
        if (k == GMLP_PK_LABELS)
            labels = meta ? meta : json;
    }
    /* gmlp_config_infer checked there is one name per class */
    return labels && m->cfg.num_classes ? set_labels(m, labels) : GMLP_OK;
}

gmlp_status gmlp_model_set_preproc(gmlp_model *m, const char *key, const char *value)
{
    int k = 0;
    while (k < GMLP_PK_COUNT && strcmp(key, gmlp_preproc_keys[k]))
        k++;
    char what[96];
    snprintf(what, sizeof what, "gmlp_model_override: %s", key);
    if (k == GMLP_PK_COUNT)
        return gmlp_fail(&m->ctx->err, GMLP_ERR_INVALID_ARGUMENT,
                         "%s is not img_size, mean, std, crop_pct, crop_mode, interpolation or labels", what);
    if (gmlp_arch_of(&m->cfg)->lm)
        return gmlp_fail(&m->ctx->err, GMLP_ERR_WRONG_MODEL, "%s: a language model has no image preprocessing", what);
    if (k == GMLP_PK_LABELS) {
        int n = gmlp_cfg_count_labels(value);
        if (n != m->cfg.num_classes)
            return gmlp_fail(&m->ctx->err, GMLP_ERR_INVALID_ARGUMENT, "%s has %d names for %d classes", what, n,
                             m->cfg.num_classes);
        GMLP_TRY(set_labels(m, value));
    } else {
        gmlp_config cfg = m->cfg;
        GMLP_TRY(gmlp_cfg_set_preproc(&cfg, (gmlp_preproc_key)k, value, what, GMLP_SOURCE_USER, &m->ctx->err));
        GMLP_TRY(gmlp_cfg_check_resize(&cfg, GMLP_ERR_INVALID_ARGUMENT, &m->ctx->err));
        m->cfg = cfg;
    }
    m->sources[k] = GMLP_SOURCE_USER;
    return GMLP_OK;
}

gmlp_status gmlp_read_file(gmlp_context *ctx, const char *path, unsigned char **data, size_t *size)
{
    struct stat sb;
    *data = NULL;
    *size = 0;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return gmlp_fail(&ctx->err, GMLP_ERR_IO, "cannot read '%s': not a regular file", path);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return gmlp_fail(&ctx->err, GMLP_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    gmlp_status st = GMLP_OK;
    long len = -1;
    if (fseek(fp, 0, SEEK_END) == 0)
        len = ftell(fp);
    if (len < 0 || fseek(fp, 0, SEEK_SET) != 0)
        st = gmlp_fail(&ctx->err, GMLP_ERR_IO, "cannot determine the size of '%s'", path);
    else if (!(*data = gmlp_malloc(len ? (size_t)len : 1)))
        st = gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory reading '%s' (%ld bytes)", path, len);
    else if (fread(*data, 1, (size_t)len, fp) != (size_t)len) /* a read error, not a crash, if it changes under us */
        st = gmlp_fail(&ctx->err, GMLP_ERR_IO, "cannot read '%s': %s", path, ferror(fp) ? strerror(errno) : "short read");
    fclose(fp);
    if (st != GMLP_OK) {
        free(*data);
        *data = NULL;
        return st;
    }
    *size = (size_t)len;
    return GMLP_OK;
}

gmlp_weight_type gmlp_weights_stored(gmlp_weight_type asked, gmlp_gemm_precision precision)
{
    if (asked != GMLP_WEIGHTS_F32)
        return asked;
    return precision == GMLP_GEMM_BF16 ? GMLP_WEIGHTS_BF16 : precision == GMLP_GEMM_FP16 ? GMLP_WEIGHTS_F16 : asked;
}

static gmlp_status load(gmlp_model *m, const void *data, size_t size, const gmlp_hf_config *hf,
                        const gmlp_model_setup *setup)
{
    gmlp_st_file f;
    gmlp_context *ctx = m->ctx;
    GMLP_TRY(gmlp_st_parse(data, size, &f, &ctx->err));
    gmlp_status st = gmlp_config_infer(&f, hf, &m->cfg, &ctx->err);
    m->cfg.weights = gmlp_weights_stored(setup->weights, setup->precision);
    m->precision = setup->precision;
    if (st == GMLP_OK)
        st = gmlp_config_check_tensors(&f, &m->cfg, &ctx->err);
    if (st == GMLP_OK) {
        for (size_t i = 0; i < f.n_tensors; i++)
            m->cfg.num_params += f.tensors[i].numel;
        st = copy_metadata(m, &f);
    }
    if (st == GMLP_OK)
        st = init_preproc(m, hf);
    /* the LM decoding step's kernels read the file's layout, which its
     * products of one token's row want: image models alone are packed */
    m->linear = st == GMLP_OK && !gmlp_arch_of(&m->cfg)->lm ? gmlp_gemm_linear_layout(ctx, setup->precision)
                                                            : GMLP_LINEAR_FILE;
    if (st == GMLP_OK)
        st = upload_all(m, &f);
    gmlp_st_free(&f);
    /* every GEMM variant the forward may pick, so that no later call compiles */
    if (st == GMLP_OK)
        st = gmlp_gemm_prepare(ctx, gmlp_weight_elem(m), gmlp_gemm_input_elem(m), setup->precision,
                               m->linear, &m->gemm_outputs);
    if (st == GMLP_OK)
        gmlp_storage_plan(m);
    return st;
}

gmlp_status gmlp_model_create(gmlp_context *ctx, const void *data, size_t size, const gmlp_hf_config *hf,
                              const gmlp_model_setup *setup, gmlp_model **out)
{
    *out = NULL;
    gmlp_model *m = gmlp_calloc(1, sizeof *m);
    if (!m)
        return gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory");
    m->ctx = ctx;
    gmlp_status st = load(m, data, size, hf, setup);
    if (st != GMLP_OK) {
        gmlp_model_destroy(m);
        return st;
    }
    *out = m;
    return GMLP_OK;
}

static void release_fields(gmlp_model *m, void *base, const gmlp_tensor_spec *specs)
{
    for (const gmlp_tensor_spec *s = specs; s->leaf; s++)
        if (s->field != GMLP_NO_FIELD)
            gmlp_buffer_release(m->ctx, field(base, s->field));
}

void gmlp_model_destroy(gmlp_model *m)
{
    gmlp_workspace_free(m);
    release_fields(m, m, gmlp_model_specs(&m->cfg));
    for (int l = 0; m->blocks && l < m->cfg.depth; l++) {
        release_fields(m, &m->blocks[l], gmlp_block_specs(&m->cfg));
        gmlp_buffer_release(m->ctx, &m->blocks[l].sgu_w); /* g-mlp-pytorch's is built outside the specs */
    }
    free(m->blocks);
    for (size_t i = 0; i < m->n_meta; i++) {
        free(m->meta_keys[i]);
        free(m->meta_values[i]);
    }
    free(m->meta_keys);
    free(m->meta_values);
    free_labels(m->labels, m->cfg.num_classes);
    for (int k = 0; k < GMLP_PK_COUNT; k++)
        free(m->conflicts[k]);
    free(m);
}
