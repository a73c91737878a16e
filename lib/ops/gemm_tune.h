/* What the tuned-choice store (gemm_tune.c) and the tuning run
 * (gemm_tune_run.c) share; lib/api/diag.c and the fuzz target use it too. */
#ifndef GMLP_GEMM_TUNE_H
#define GMLP_GEMM_TUNE_H

#include "gmlp_diag.h"
#include "ops/ops.h"

/* One slot per size class, operand form (A's and B's storage, A transposed,
 * B transposed) and precision. */
#define GMLP_TUNE_SLOTS (GMLP_GEMM_CLASSES * GMLP_ELEMS * GMLP_ELEMS * 4 * GMLP_GEMM_PRECISIONS)

struct gmlp_tuned {
    int set[GMLP_TUNE_SLOTS];
    gmlp_tuned_choice choice[GMLP_TUNE_SLOTS];
};
typedef struct gmlp_tuned gmlp_tuned;

/* The distinct GEMM shapes a model ran (buffers NULL; bias non-NULL when
 * there was one, beta 0 or 1). */
struct gmlp_gemm_record {
    gmlp_gemm *g;
    size_t n, cap;
    int lost; /* out of host memory: some shapes were not noted */
};
typedef struct gmlp_gemm_record gmlp_gemm_record;

size_t gmlp_tune_slot(int cls, gmlp_elem a, gmlp_elem b, int ta, int tb, gmlp_gemm_precision precision);
/* What a slot stands for. */
typedef struct gmlp_tune_key {
    int cls;
    gmlp_elem a, b;
    int ta, tb;
    gmlp_gemm_precision precision;
} gmlp_tune_key;
gmlp_tune_key gmlp_tune_slot_key(size_t slot);
/* "large NT float x half" ("... bf16" in another precision than fp32): a
 * slot, for messages and progress. */
void gmlp_tune_slot_name(size_t slot, char *buf, size_t size);

/* A tuning file's text for device dev into *out; 0, with why set and *out
 * empty, when anything in it is off: not JSON, another format, device,
 * driver or library version, an unknown or unfitting tiling, CLBlast for
 * 16-bit operands, a slot named twice. */
int gmlp_tune_parse(const gmlp_devinfo *dev, const void *data, size_t size, gmlp_tuned *out, char *why,
                    size_t why_size);
/* Writes t as the device's tuning file (us: microseconds per slot, for
 * readers; may be NULL). */
gmlp_status gmlp_tune_save(gmlp_context *ctx, const gmlp_tuned *t, const double *us);

/* Times every candidate on the recorded shapes, checks each against the
 * default kernel's result, keeps the fastest per slot in ctx->tuned (slots
 * not run keep their old winners) and saves the file.  ctx's lock held. */
gmlp_status gmlp_tune_run(gmlp_context *ctx, const gmlp_gemm_record *rec, gmlp_tune_progress progress, void *user);

#endif
