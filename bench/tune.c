/* gmlp-bench --tune: gmlp_tune on one model at each batch given, per weight
 * storage and precision (the tuning file keeps a slot for each), each
 * candidate's time as progress on stderr, the winners as a table on stdout
 * with the tuning's wall time. */
#include <stdio.h>

#include "bench.h"
#include "gmlp_diag.h"

static void on_step(void *user, const gmlp_tune_step *s)
{
    (void)user;
    if (s->winner) {
        printf("%-30s %-28s %12.1f\n", s->group, s->candidate, s->us);
        fflush(stdout);
    } else if (s->skipped) {
        fprintf(stderr, "gmlp-bench: tuning %s: %d/%d %s: %s\n", s->group, s->index + 1, s->count, s->candidate,
                s->skipped);
    } else {
        fprintf(stderr, "gmlp-bench: tuning %s: %d/%d %s: %.1f us\n", s->group, s->index + 1, s->count,
                s->candidate, s->us);
    }
}

int bench_tune(const bench_opts *o, const char *dev_spec, const char *name, const unsigned char *file, size_t size)
{
    gmlp_context_options co;
    gmlp_context_options_default(&co);
    co.device = dev_spec;
    co.profiling = 1; /* candidates timed by the device's own clock */
    gmlp_context *ctx = NULL;
    if (gmlp_context_create_ex(&co, &ctx) != GMLP_OK) {
        fprintf(stderr, "gmlp-bench: %s\n", gmlp_last_error(NULL));
        return 0;
    }
    int ok = 1;
    for (int i = 0; i < o->n_weights * o->n_precisions && ok; i++) {
        gmlp_load_options lo;
        gmlp_load_options_default(&lo);
        lo.weights = (gmlp_weight_type)o->weights[i / o->n_precisions];
        lo.precision = (gmlp_precision)o->precisions[i % o->n_precisions];
        gmlp_model *m = NULL;
        ok = gmlp_model_load_memory_ex(ctx, file, size, &lo, &m) == GMLP_OK;
        for (int b = 0; b < o->n_batches && ok; b++) {
            printf("\n# %s, %s, %s weights, %s, batch %d: tuned GEMM winners (device time per model forward's "
                   "calls)\n",
                   gmlp_context_device_name(ctx), bench_base_name(name), bench_weight_names[lo.weights],
                   gmlp_precision_name(lo.precision), o->batches[b]);
            printf("%-30s %-28s %12s\n", "group", "winner", "us");
            double t0 = bench_now();
            ok = gmlp_tune(ctx, m, (size_t)o->batches[b], on_step, NULL) == GMLP_OK;
            if (ok) /* compiles included: the candidates not yet in the kernel cache */
                printf("# tuned in %.1f s\n", bench_now() - t0);
        }
        if (!ok)
            fprintf(stderr, "gmlp-bench: tuning %s: %s\n", bench_base_name(name), gmlp_last_error(ctx));
        gmlp_model_free(m);
    }
    gmlp_context_destroy(ctx);
    return ok;
}
