/* Devices: the list, and gmlp_device_report, a device's description and
 * whether each of the library's kernels builds there (gmlp-classify
 * --list-devices and gmlp-bench print it). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "core/alloc.h"
#include "cl/device.h"
#include "kernel_abi.h"
#include "model/model.h"
#include "ops/ops.h"

#define REPORT_SIZE 8192
#define REASON_CHARS 300 /* of a failure message: enough to name the problem */

typedef struct report {
    char text[REPORT_SIZE];
    size_t len;
} report;

static void add(report *r, const char *fmt, ...) GMLP_PRINTF(2, 3);

static void add(report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->text + r->len, sizeof r->text - r->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        r->len = r->len + (size_t)n < sizeof r->text ? r->len + (size_t)n : sizeof r->text - 1;
}

/* "FAILED: " and the start of msg on one line; of a build failure, the
 * start of the build log. */
static void add_failure(report *r, const char *msg)
{
    const char *log = strstr(msg, "build log:");
    if (log)
        msg = log;
    char line[REASON_CHARS + 1];
    size_t n = strnlen(msg, REASON_CHARS);
    memcpy(line, msg, n);
    line[n] = 0;
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    add(r, "FAILED: %s\n", line);
}

static void add_kernels(report *r, gmlp_context *ctx)
{
    char names[1024];
    if (clGetProgramInfo(ctx->kernels.shared, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, NULL) != CL_SUCCESS)
        snprintf(names, sizeof names, "shared program");
    for (char *p = names; *p; p++)
        if (*p == ';')
            *p = ' ';
    add(r, "   %s: built\n", names);
    static const char *const variants[] = {"float", "A half", "B half", "A and B half"};
    for (int v = 0; v < 4; v++) {
        char tiles[512];
        add(r, "   gmlp_gemm (%s): ", variants[v]);
        if (gmlp_gemm_describe(ctx, v & 1 ? GMLP_ELEM_F16 : GMLP_ELEM_F32, v >> 1 ? GMLP_ELEM_F16 : GMLP_ELEM_F32,
                               GMLP_GEMM_FP32, tiles, sizeof tiles) == GMLP_OK)
            add(r, "built, %s\n", tiles);
        else
            add_failure(r, ctx->err.msg);
    }
    /* what runs the linear layers in each precision mode, weights stored as a model of that mode stores them */
    add(r, "   precision modes:");
    for (int p = GMLP_GEMM_FP32; p < GMLP_GEMM_PRECISIONS; p++) {
        const char *engine;
        const gmlp_gemm_precision prec = (gmlp_gemm_precision)p;
        if (gmlp_gemm_engine(ctx, (gmlp_elem)gmlp_weights_stored(GMLP_WEIGHTS_F32, prec), prec,
                             gmlp_gemm_linear_layout(ctx, prec), &engine) != GMLP_OK) {
            add(r, "\n");
            add_failure(r, ctx->err.msg);
            return;
        }
        add(r, "%s %s %s", p == GMLP_GEMM_FP32 ? "" : ",", gmlp_gemm_precision_name(prec), engine);
    }
    add(r, "\n");
    /* how a recorded forward replays (cl/record.h) */
    add(r, "   recorded forwards: %s\n", ctx->cmdbuf_why);
    /* where the blocks' LayerNorms run (model/block.c: the fused LayerNorm) */
    const bool fuse_a = gmlp_gemm_fusing(ctx, GMLP_NORM_OF_A), fuse_b = gmlp_gemm_fusing(ctx, GMLP_NORM_OF_B);
    add(r, "   LayerNorms: %s%s%s%s\n",
        !ctx->set.fuse ? "kernels of their own (GMLP_FUSE=0)"
        : !fuse_a && !fuse_b
            ? "kernels of their own: not fused on this device (bench/NOTES.md, The fused LayerNorm's second half; "
              "GMLP_FUSE=1: fused wherever the kernel can)"
            : "fused where the block allows (GMLP_FUSE=0: kernels of their own): ",
        ctx->set.fuse && fuse_a ? "into fc1, its A normalised as it loads" : "",
        ctx->set.fuse && fuse_a && fuse_b ? "; " : "",
        ctx->set.fuse && fuse_b ? "into the token-axis products (the spatial GEMM, the token MLPs), their B normalised "
                                  "as it loads" : "");
    /* how image models store their linear weights (model/load.c) */
    const gmlp_linear_layout fp32 = gmlp_gemm_linear_layout(ctx, GMLP_GEMM_FP32),
                             bf16 = gmlp_gemm_linear_layout(ctx, GMLP_GEMM_BF16);
    add(r, "   linear weights: %s%s\n",
        !ctx->set.pack ? "as the file stores them, out x in (GMLP_PACK=0)"
        : fp32 == GMLP_LINEAR_KN
            ? "image models' packed at load as in x out, the products NN (bench/NOTES.md, Linear weights packed "
              "at load; GMLP_PACK=0: as the file stores them)"
            : "as the file stores them, out x in, the products NT (GMLP_PACK=1: packed in x out)",
        bf16 == GMLP_LINEAR_PAIRS ? "; BF16's in x out as pairs along k, vdpbf16ps's operand (bench/NOTES.md, BF16's "
                                    "linear weights as pairs along k)"
                                  : "");
    /* how an LM decodes a token from a cache (model/lm_step.c) */
    add(r, "   LM decoding: %s\n",
        ctx->set.lm_step ? "the fused step, 3 kernels a layer, where the model allows (lm_step.cl; GMLP_LM_STEP=0: "
                           "the per-op kernels)"
                         : "the per-op kernels (GMLP_LM_STEP=0)");
    /* where generation samples (model/lm_sample.c) */
    if (ctx->set.sample_device && gmlp_sample_device_able(ctx))
        add(r, "   LM sampling: on the device, up to 32 steps run ahead, where the fused step runs and top_k <= %d or "
               "the vocabulary is that small (sample.cl; GMLP_SAMPLE_DEVICE=0: on the host)\n", GMLP_SAMPLE_MAX);
    else
        add(r, "   LM sampling: on the host (%s)\n",
            ctx->set.sample_device ? "the device has no cl_khr_fp64" : "GMLP_SAMPLE_DEVICE=0");
}

/* The OpenCL CPU implementations measured against each other on the same
 * CPU: what a user choosing between them should know, and how to choose the
 * other (by platform name).  The default device never depends on it (the
 * first GPU, else the first device in the ICD loader's order). */
#define CPU_RUNTIMES_MEASURED                                                                                          \
    "PoCL ran gmlp_ti16_224 and gmlp_s16_224 0.76-1.67x as fast as Intel's OpenCL CPU runtime in FP32 over two runs "  \
    "(medians 0.99-1.50x), mixer_b16_224 0.85-1.17x (2-core EPYC, Zen 4, 2026-12-05; on a Zen 5 0.85-1.26x and "      \
    "0.79-1.06x; bench/NOTES.md, The anchors level in BF16)"
static const struct {
    const char *platform;
    const char *other; /* how -d chooses the other one */
} cpu_runtimes[] = {
    {"Portable Computing Language", "-d intel chooses Intel's"},
    {"Intel(R) OpenCL", "-d pocl chooses PoCL"},
};

static void add_cpu_runtime(report *r, const gmlp_devinfo *d)
{
    for (size_t i = 0; (d->type & CL_DEVICE_TYPE_CPU) && i < sizeof cpu_runtimes / sizeof *cpu_runtimes; i++)
        if (!strcmp(d->platform_name, cpu_runtimes[i].platform))
            add(r, "   CPU runtimes: %s; %s\n", CPU_RUNTIMES_MEASURED, cpu_runtimes[i].other);
}

size_t gmlp_device_report(const char *device, char *buf, size_t size)
{
    if (buf && size)
        buf[0] = 0;
    if (!device)
        device = gmlp_env_device(); /* as gmlp_context_create does */
    gmlp_error *err = gmlp_api_error();
    gmlp_devinfo d;
    if (gmlp_device_select(device, &d, err) != GMLP_OK)
        return 0;
    report *r = gmlp_malloc(sizeof *r);
    if (!r) {
        gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "out of host memory for a report");
        return 0;
    }
    r->len = 0;
    r->text[0] = 0;
    char line[1024];
    gmlp_devinfo_format(&d, d.index, line, sizeof line);
    add(r, "%s", line);
    add(r, "   local memory %llu KiB, work-groups up to %zu, native float vectors %u, cl_khr_fp16 %s%s%s\n",
        (unsigned long long)(d.local_mem / 1024), d.max_wg, d.native_floats,
        gmlp_device_has_extension(d.device, "cl_khr_fp16") ? "yes" : "no (half storage only)",
        d.arch[0] ? ", architecture " : "", d.arch);
    add_cpu_runtime(r, &d);
    char spec[32];
    snprintf(spec, sizeof spec, "%zu", d.index);
    gmlp_context *ctx;
    if (gmlp_context_create(spec, &ctx) == GMLP_OK) {
        add_kernels(r, ctx);
        gmlp_context_destroy(ctx);
    } else {
        add(r, "   kernels: ");
        add_failure(r, gmlp_last_error(NULL));
        add(r, "   gmlp_gemm: not tried without a context\n");
    }
    if (buf && size) {
        size_t n = r->len < size - 1 ? r->len : size - 1;
        memcpy(buf, r->text, n);
        buf[n] = 0;
    }
    size_t len = r->len;
    free(r);
    return len;
}

size_t gmlp_list_devices(char *buf, size_t size)
{
    gmlp_devinfo *list;
    size_t n, need = 0;
    if (buf && size)
        buf[0] = 0;
    if (gmlp_devices_enumerate(&list, &n, gmlp_api_error()) != GMLP_OK)
        return 0;
    char line[1024];
    for (size_t i = 0; i < n; i++) {
        int len = gmlp_devinfo_format(&list[i], i, line, sizeof line);
        if (len < 0)
            continue;
        if (buf && need + (size_t)len < size)
            memcpy(buf + need, line, (size_t)len + 1);
        need += (size_t)len;
    }
    free(list);
    return need;
}
