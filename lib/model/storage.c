/* What a forward holds in its workspace, each activation a named view: how
 * it is stored (float, or the mode's 16-bit format), decided once per model
 * from the rules below (gmlp_storage_plan, at load), and where it lives
 * (gmlp_held).  A rule that stores one more activation in 16 bits is one
 * row here; the ops take any storage (gmlp_elem_get / _put, common.cl). */
#include "model/arch.h"
#include "model/model.h"

/* In a BF16 or FP16 model an activation may take the format the GEMMs round
 * their operands to (AS_INPUT), or the one gmlp_gemm_prepare found their
 * products keep their tilings in (AS_OUTPUT), unless a reader needs floats. */
enum { AS_FLOAT, AS_INPUT, AS_OUTPUT };
enum { UNLESS_SHIFT = 1, UNLESS_ATTENTION = 2, UNLESS_CACHE = 4 };

static const struct {
    int as;
    unsigned unless;
} rules[GMLP_HELDS] = {
    /* fc1's [u | v] (GluMlp's [x1 | x2]), which LN(v) and the gate read, and GluMlp's token gate: as the
     * GEMMs' operands on every device (their rounding shows in the results, so it may not depend on the
     * device's tilings as AS_OUTPUT does); measured against float64 and PyTorch's autocast in bench/NOTES.md */
    [GMLP_HELD_UV] = {AS_INPUT, 0},
    [GMLP_HELD_TOKENS_GATE] = {AS_INPUT, 0},
    /* LN(x) or Aff(x): only GEMMs read it (fc1, the token mixer, the attention's qkv), but the token shift */
    [GMLP_HELD_LN] = {AS_INPUT, UNLESS_SHIFT},
    /* the SGU's LN(v): the spatial matmuls' B, but a decoding state's cache keeps floats */
    [GMLP_HELD_LNV] = {AS_INPUT, UNLESS_CACHE},
    /* act(W_h . LN(v) + b) * u: fc2's A, but where it adds to the attention's float output or a decoding
     * step's (whose history is float) */
    [GMLP_HELD_GATED] = {AS_OUTPUT, UNLESS_ATTENTION | UNLESS_CACHE},
    [GMLP_HELD_GATED_APART] = {AS_OUTPUT, UNLESS_ATTENTION | UNLESS_CACHE},
    /* the channel MLP's hidden product (Mixer, ResMLP; GluMlp's gated half): fc2's A */
    [GMLP_HELD_HIDDEN] = {AS_OUTPUT, 0},
    /* the Mixer's token-MLP hidden product (GluMlp's gated half): tok2's B */
    [GMLP_HELD_TOKENS] = {AS_OUTPUT, 0},
    /* the stem's patches: its A alone, which it rounds as it loads it (stored so, the same bits; a float A
     * took PoCL's vdpbf16ps block 2-4x as long as a bfloat16 one) */
    [GMLP_HELD_PATCHES] = {AS_INPUT, 0},
    /* the others are float: the residual (its 16-bit rule's error in bench/NOTES.md), the shifted tokens,
     * the stem's output, the final norm (the mean over tokens, the LM head) */
};

void gmlp_storage_plan(gmlp_model *m)
{
    const gmlp_config *c = &m->cfg;
    for (int cached = 0; cached < 2; cached++) {
        const unsigned now = (c->shift_tokens ? UNLESS_SHIFT : 0u) | (c->attn_dim ? UNLESS_ATTENTION : 0u) |
                             (cached ? UNLESS_CACHE : 0u);
        for (int i = 0; i < GMLP_HELDS; i++)
            m->held[cached][i] = rules[i].as == AS_FLOAT || (rules[i].unless & now) ? GMLP_ELEM_F32
                                 : rules[i].as == AS_INPUT                          ? gmlp_gemm_input_elem(m)
                                                                                    : m->gemm_outputs;
    }
}

/* Where an activation lives: its buffer, first element and pitch; in_floats: counted in floats of a
 * buffer whose rows hold floats too (its 16-bit rows from the first byte of their float slots), else in
 * its own elements (a buffer that holds it alone). */
typedef struct place {
    cl_mem buf;
    size_t off, ld;
    int in_floats;
} place;

static place place_of(const gmlp_pass *p, gmlp_held_id what)
{
    const gmlp_config *c = &p->m->cfg;
    const gmlp_workspace *w = &p->m->ws;
    const size_t d = p->d, h = p->h, g = h / 2, t = p->t;
    const int glu = gmlp_arch_of(c)->halves;
    switch (what) {
    case GMLP_HELD_X:
        return (place){w->x, 0, d, 0};
    case GMLP_HELD_LN:
    case GMLP_HELD_STEM:
    case GMLP_HELD_FINAL:
        return (place){w->y, 0, d, 0};
    case GMLP_HELD_SHIFTED:
        return (place){w->ys, 0, d, 0};
    case GMLP_HELD_LNV: /* y again: fc1 has consumed LN(x) */
    case GMLP_HELD_GATED_APART: /* the same y, free where LN(v) is not stored: v is read to the end */
        return (place){w->y, 0, g, 0};
    /* z's jobs: the stem's patches, fc1's [u | v] with the gated product over v's half (read by then;
     * a 16-bit [u | v] lies in the first half of its float slots, clear of it), the channel MLP's hidden
     * product (GluMlp's over its second half), per image the token MLP's t x d */
    case GMLP_HELD_PATCHES:
        return (place){w->z, 0, (size_t)c->in_chans * (size_t)c->patch_h * (size_t)c->patch_w, 1};
    case GMLP_HELD_UV:
        return (place){w->z, 0, h, 1};
    case GMLP_HELD_GATED:
        return (place){w->z, g, h, 1};
    case GMLP_HELD_HIDDEN:
        return (place){w->z, glu ? g : 0, h, 1};
    case GMLP_HELD_TOKENS_GATE:
        return (place){w->z, 0, d, 1};
    case GMLP_HELD_TOKENS:
        return (place){w->z, glu ? t / 2 * d : 0, d, 1};
    default:
        return (place){NULL, 0, 0, 0};
    }
}

gmlp_view gmlp_held(const gmlp_pass *p, gmlp_held_id what)
{
    const place at = place_of(p, what);
    const gmlp_elem e = p->m->held[p->cache != NULL][what];
    const size_t per = at.in_floats ? sizeof(float) / gmlp_elem_size(e) : 1;
    return (gmlp_view){.buf = at.buf, .off = at.off * per, .ld = at.ld * per, .elem = e};
}

gmlp_view gmlp_per_seq(gmlp_view v, size_t rows)
{
    v.stride = rows * v.ld;
    return v;
}

gmlp_rows gmlp_rows_of(gmlp_view v)
{
    return (gmlp_rows){.buf = v.buf, .off = v.off, .ld = v.ld, .elem = v.elem};
}
