/* One workspace planner for every architecture: what each activation buffer
 * holds per row, per sequence and per output row, its size for a capacity,
 * and how many sequences fit the memory budget. */
#include "model/arch.h"
#include "model/model.h"

/* Vision passes never exceed this many images, whatever the budget: the
 * largest batch measured to help on a GPU, with room for more. */
#define MAX_SEQS 1024

typedef struct buffer_plan {
    cl_mem *buf;
    size_t bytes;
    const char *what;
} buffer_plan;

enum { N_BUFFERS = 13 };

static size_t max2(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* Sizes of m's buffers at capacity (rows, seqs, kv_len, out_rows). */
static void plan(gmlp_model *m, size_t rows, size_t seqs, size_t kv_len, size_t out_rows, buffer_plan *p)
{
    const gmlp_config *c = &m->cfg;
    gmlp_workspace *w = &m->ws;
    const size_t d = (size_t)c->dim, h = (size_t)c->ffn_dim, a = (size_t)c->attn_dim, f = sizeof(float);
    const gmlp_arch_desc *arch = gmlp_arch_of(c);
    const int lm = arch->lm, mixer = arch->mix == GMLP_MIX_MLP, sgu = arch->mix == GMLP_MIX_SGU;
    const size_t image = (size_t)c->in_chans * (size_t)c->img_h * (size_t)c->img_w;
    const size_t patch = (size_t)c->in_chans * (size_t)c->patch_h * (size_t)c->patch_w;
    const size_t classes = lm ? (size_t)c->vocab_size : max2((size_t)c->num_classes, 1);
    const size_t z = max2(rows * max2(h, lm ? 0 : patch), mixer ? seqs * (size_t)c->token_dim * d : 0);
    /* row statistics where a LayerNorm may fuse into the product that reads it (block.c): the most parts
     * a tiling writes; x's (fc1, the Mixer's token MLP), the SGU's v's */
    const bool fuse_a = gmlp_gemm_fusing(m->ctx, GMLP_NORM_OF_A), fuse_b = gmlp_gemm_fusing(m->ctx, GMLP_NORM_OF_B);
    const bool stats = arch->norm == GMLP_NORM_LAYERNORM && (fuse_a || (mixer && fuse_b));
    const buffer_plan all[N_BUFFERS] = {
        {&w->input, lm ? rows * sizeof(cl_int) : seqs * image * f, lm ? "the token ids" : "the input images"},
        {&w->x, rows * d * f, "the residual stream"},
        {&w->y, rows * max2(d, sgu ? h / 2 : 0) * f, "the LayerNorm outputs"},
        {&w->ys, c->shift_tokens ? rows * d * f : 0, "the shifted tokens"},
        {&w->z, z * f, "the MLP activations"},
        {&w->qkv, rows * 3 * a * f, "the attention queries, keys and values"},
        {&w->sim, a ? rows * kv_len * f : 0, "the attention weights"},
        {&w->ao, rows * a * f, "the attention outputs"},
        {&w->pooled, lm ? 0 : seqs * d * f, "the pooled features"},
        {&w->out, out_rows * classes * f, lm ? "the logits" : "the logits or features"},
        {&w->stats, stats ? rows * gmlp_gemm_stats_parts_max(d) * 3 * f : 0, "the row statistics"},
        {&w->stats_v, sgu && fuse_b ? rows * gmlp_gemm_stats_parts_max(h) * 3 * f : 0, "the gate's row statistics"},
        {NULL, 0, NULL},
    };
    for (int i = 0; i < N_BUFFERS; i++)
        p[i] = all[i];
}

void gmlp_workspace_free(gmlp_model *m)
{
    gmlp_workspace *w = &m->ws;
    gmlp_model_recordings_free(m); /* they bind the buffers */
    buffer_plan p[N_BUFFERS];
    plan(m, 0, 0, 0, 0, p);
    for (int i = 0; p[i].buf; i++)
        gmlp_buffer_release(m->ctx, p[i].buf);
    w->rows = w->seqs = w->kv_len = w->out_rows = w->bytes = 0;
}

static gmlp_status allocate(gmlp_model *m, size_t rows, size_t seqs, size_t kv_len, size_t out_rows)
{
    gmlp_workspace *w = &m->ws;
    buffer_plan p[N_BUFFERS];
    plan(m, rows, seqs, kv_len, out_rows, p);
    for (int i = 0; p[i].buf; i++) {
        if (!p[i].bytes)
            continue;
        gmlp_status st = gmlp_buffer_create(m->ctx, p[i].bytes, NULL, p[i].what, p[i].buf);
        if (st != GMLP_OK) {
            gmlp_workspace_free(m);
            return st;
        }
        w->bytes += p[i].bytes;
    }
    w->rows = rows, w->seqs = seqs, w->kv_len = kv_len, w->out_rows = out_rows;
    w->generation++;
    return GMLP_OK;
}

static size_t plan_bytes(gmlp_model *m, const size_t cap[4])
{
    buffer_plan p[N_BUFFERS];
    plan(m, cap[0], cap[1], cap[2], cap[3], p);
    size_t total = 0;
    for (int i = 0; p[i].buf; i++)
        total += p[i].bytes;
    return total;
}

gmlp_status gmlp_workspace_reserve(gmlp_model *m, size_t rows, size_t seqs, size_t kv_len, size_t out_rows)
{
    gmlp_workspace *w = &m->ws;
    const size_t want[4] = {rows, seqs, kv_len, out_rows}, have[4] = {w->rows, w->seqs, w->kv_len, w->out_rows};
    size_t exact[4], doubled[4];
    int enough = 1;
    for (int i = 0; i < 4; i++) {
        enough &= want[i] <= have[i];
        exact[i] = max2(want[i], have[i]);
        /* grow at least twofold: sequences that lengthen by one token per
         * call reallocate O(log n) times, not n */
        doubled[i] = want[i] <= have[i] ? have[i] : max2(want[i], 2 * have[i]);
    }
    if (enough)
        return GMLP_OK;
    if (doubled[2] > (size_t)m->cfg.seq_len) /* keys never outnumber the positions */
        doubled[2] = max2((size_t)m->cfg.seq_len, exact[2]);
    const size_t *cap = plan_bytes(m, doubled) <= gmlp_mem_budget(m->ctx, w->bytes) ? doubled : exact;
    gmlp_workspace_free(m);
    if (cap == doubled && allocate(m, cap[0], cap[1], cap[2], cap[3]) == GMLP_OK)
        return GMLP_OK;
    return allocate(m, exact[0], exact[1], exact[2], exact[3]);
}

size_t gmlp_workspace_max_seqs(const gmlp_model *m, size_t n, size_t out_per_seq)
{
    buffer_plan p[N_BUFFERS];
    plan((gmlp_model *)m, n, 1, n, out_per_seq, p); /* sizes only: nothing is touched */
    size_t per_seq = 0, biggest = 1;
    for (int i = 0; p[i].buf; i++) {
        per_seq += p[i].bytes;
        biggest = max2(biggest, p[i].bytes);
    }
    size_t by_alloc = (size_t)m->ctx->dev.max_alloc / biggest;
    size_t by_budget = gmlp_mem_budget(m->ctx, m->ws.bytes) / (per_seq ? per_seq : 1);
    size_t seqs = by_alloc < by_budget ? by_alloc : by_budget;
    return seqs < 1 ? 1 : seqs > MAX_SEQS ? MAX_SEQS : seqs;
}
