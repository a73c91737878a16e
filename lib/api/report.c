/* gmlp_device_report: a device's description and whether each of the
 * library's kernels builds there (gmlp-classify --list-devices and
 * gmlp-bench print it). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/context.h"
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

static int has_fp16(cl_device_id d)
{
    size_t n = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &n) != CL_SUCCESS || !n)
        return 0;
    char *ext = malloc(n);
    int yes = ext && clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, ext, NULL) == CL_SUCCESS && strstr(ext, "cl_khr_fp16");
    free(ext);
    return yes;
}

static void add_kernels(report *r, gmlp_context *ctx)
{
    char names[1024];
    if (clGetProgramInfo(ctx->program, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, NULL) != CL_SUCCESS)
        snprintf(names, sizeof names, "shared program");
    for (char *p = names; *p; p++)
        if (*p == ';')
            *p = ' ';
    add(r, "   %s: built\n", names);
    static const char *const variants[] = {"float", "A half", "B half", "A and B half"};
    for (int v = 0; v < 4; v++) {
        const gmlp_gemm_kernel *t[3];
        add(r, "   gmlp_gemm (%s): ", variants[v]);
        int ok = 1;
        for (int size = 0; size < 3 && ok; size++)
            ok = gmlp_gemm_kernel_get(ctx, v & 1, v >> 1, (gmlp_tiles)size, &t[size]) == GMLP_OK;
        if (!ok) {
            add_failure(r, ctx->err);
            continue;
        }
        add(r, "built, %dx%dx%d tiles (%dx%d per work-item)", t[0]->tm, t[0]->tn, t[0]->tk, t[0]->wm, t[0]->wn);
        static const char *const uses[] = {"", "large products", "narrow ones"};
        for (int size = 1; size < 3; size++)
            if (t[size] != t[0])
                add(r, ", %dx%dx%d (%dx%d) for %s", t[size]->tm, t[size]->tn, t[size]->tk, t[size]->wm, t[size]->wn,
                    uses[size]);
        add(r, "\n");
    }
}

size_t gmlp_device_report(const char *device, char *buf, size_t size)
{
    if (buf && size)
        buf[0] = 0;
    if (!device)
        device = getenv("GMLP_DEVICE"); /* as gmlp_context_create does */
    gmlp_devinfo d;
    if (gmlp_device_select(device, &d, gmlp_thread_error(), GMLP_ERRMSG_SIZE) != GMLP_OK)
        return 0;
    report *r = malloc(sizeof *r);
    if (!r) {
        gmlp_errf(gmlp_thread_error(), GMLP_ERRMSG_SIZE, GMLP_ERR_HOST_MEMORY, "out of host memory for a report");
        return 0;
    }
    r->len = 0;
    r->text[0] = 0;
    char line[1024];
    gmlp_devinfo_format(&d, d.index, line, sizeof line);
    add(r, "%s", line);
    add(r, "   local memory %llu KiB, work-groups up to %zu, cl_khr_fp16 %s\n",
        (unsigned long long)(d.local_mem / 1024), d.max_wg, has_fp16(d.device) ? "yes" : "no (half storage only)");
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
