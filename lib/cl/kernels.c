#include "kernels.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/clerr.h"
#include "cl/context.h"
#include "cl/program.h"
#include "cl/record.h"
#include "cl/sources.h"
#include "core/alloc.h"

struct gmlp_program_entry {
    const char *file;
    char *defines;
    const gmlp_program_rewrite *rewrite;
    cl_program program;
};

static int same_defines(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static char *dup_or_null(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = gmlp_malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

gmlp_status gmlp_kernels_init(gmlp_context *ctx, const char *shared_options)
{
    return gmlp_program_build(ctx, NULL, shared_options, &ctx->kernels.shared);
}

void gmlp_kernels_release(gmlp_context *ctx)
{
    gmlp_kernel_cache *c = &ctx->kernels;
    for (size_t i = 0; i < c->n_kernels; i++) {
        clReleaseKernel(c->kernels[i]->k);
        free(c->kernels[i]->defines);
        free(c->kernels[i]);
    }
    for (size_t i = 0; i < c->n_programs; i++) {
        clReleaseProgram(c->programs[i].program);
        free(c->programs[i].defines);
    }
    if (c->shared)
        clReleaseProgram(c->shared);
    free(c->kernels);
    free(c->programs);
    memset(c, 0, sizeof *c);
}

static int is_solo(const char *file)
{
    for (const gmlp_cl_source *s = gmlp_cl_sources; s->name; s++)
        if (!strcmp(s->name, file))
            return s->kind == GMLP_SRC_SOLO;
    return 0;
}

/* The program holding spec's kernel, built on first use. */
static gmlp_status program_for(gmlp_context *ctx, const gmlp_kernel_spec *spec, const char *defines,
                               const gmlp_program_rewrite *rw, cl_program *out)
{
    gmlp_kernel_cache *c = &ctx->kernels;
    if (!is_solo(spec->file)) {
        *out = c->shared;
        return GMLP_OK;
    }
    for (size_t i = 0; i < c->n_programs; i++)
        if (!strcmp(c->programs[i].file, spec->file) && same_defines(c->programs[i].defines, defines) &&
            c->programs[i].rewrite == rw) {
            *out = c->programs[i].program;
            return GMLP_OK;
        }
    struct gmlp_program_entry *grown = gmlp_realloc(c->programs, (c->n_programs + 1) * sizeof *grown);
    if (!grown)
        return gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory caching kernels");
    c->programs = grown;
    struct gmlp_program_entry *p = &c->programs[c->n_programs];
    p->file = spec->file;
    p->rewrite = rw;
    p->defines = dup_or_null(defines);
    if (defines && !p->defines)
        return gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory caching kernels");
    gmlp_status st = gmlp_program_build_rewritten(ctx, spec->file, defines ? defines : "", rw, &p->program);
    if (st != GMLP_OK) {
        free(p->defines);
        return st;
    }
    c->n_programs++;
    *out = p->program;
    return GMLP_OK;
}

gmlp_status gmlp_kernel_get(gmlp_context *ctx, const gmlp_kernel_spec *spec, const char *defines, const char *label,
                            const gmlp_kernel **out)
{
    return gmlp_kernel_get_rewritten(ctx, spec, defines, NULL, label, out);
}

gmlp_status gmlp_kernel_get_rewritten(gmlp_context *ctx, const gmlp_kernel_spec *spec, const char *defines,
                                      const gmlp_program_rewrite *rw, const char *label, const gmlp_kernel **out)
{
    gmlp_kernel_cache *c = &ctx->kernels;
    for (size_t i = 0; i < c->n_kernels; i++)
        if (c->kernels[i]->spec == spec && same_defines(c->kernels[i]->defines, defines) &&
            c->kernels[i]->rewrite == rw) {
            *out = c->kernels[i];
            return GMLP_OK;
        }
    if (rw && !is_solo(spec->file))
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "a rewritten program of the shared sources (%s)",
                         spec->file);
    cl_program prog = NULL;
    GMLP_TRY(program_for(ctx, spec, defines, rw, &prog));
    gmlp_kernel **grown = gmlp_realloc(c->kernels, (c->n_kernels + 1) * sizeof *grown);
    gmlp_kernel *k = gmlp_calloc(1, sizeof *k);
    if (grown)
        c->kernels = grown;
    if (!grown || !k || (defines && !(k->defines = dup_or_null(defines)))) {
        free(k);
        return gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory caching kernels");
    }
    cl_int e;
    k->spec = spec;
    k->rewrite = rw;
    k->program = prog;
    k->k = clCreateKernel(prog, spec->entry, &e);
    if (e != CL_SUCCESS) {
        free(k->defines);
        free(k);
        char call[128];
        snprintf(call, sizeof call, "clCreateKernel(%s)", spec->entry);
        return gmlp_fail_cl(&ctx->err, call, e);
    }
    /* unanswered queries are no reason to refuse: a launch would tell */
    if (clGetKernelWorkGroupInfo(k->k, ctx->dev.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof k->wg_max, &k->wg_max, NULL))
        k->wg_max = (size_t)-1;
    clGetKernelWorkGroupInfo(k->k, ctx->dev.device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof k->local_mem, &k->local_mem, NULL);
    clGetKernelWorkGroupInfo(k->k, ctx->dev.device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof k->private_mem,
                             &k->private_mem, NULL);
    snprintf(k->label, sizeof k->label, "%s", label ? label : spec->entry);
    c->kernels[c->n_kernels++] = k;
    *out = k;
    return GMLP_OK;
}

gmlp_status gmlp_kernel_args(gmlp_context *ctx, const gmlp_kernel *k, ...)
{
    cl_kernel target = k->k;
    if (ctx->rec)
        GMLP_TRY(gmlp_record_bind(ctx, k, &target));
    va_list ap;
    va_start(ap, k);
    cl_uint i = 0;
    cl_int e = CL_SUCCESS;
    for (int kind; e == CL_SUCCESS && (kind = va_arg(ap, int)) != GMLP_ARG_END; i++) {
        if (kind == GMLP_ARG_MEM) {
            cl_mem m = va_arg(ap, cl_mem);
            e = clSetKernelArg(target, i, sizeof m, &m);
        } else if (kind == GMLP_ARG_INT) {
            cl_int v = va_arg(ap, int);
            e = clSetKernelArg(target, i, sizeof v, &v);
        } else if (kind == GMLP_ARG_ULONG) {
            cl_ulong v = va_arg(ap, cl_ulong);
            e = clSetKernelArg(target, i, sizeof v, &v);
        } else {
            cl_float v = (cl_float)va_arg(ap, double);
            e = clSetKernelArg(target, i, sizeof v, &v);
        }
    }
    va_end(ap);
    if (e == CL_SUCCESS)
        return GMLP_OK;
    char call[200];
    snprintf(call, sizeof call, "clSetKernelArg(%s, %u)", k->label, i - 1);
    return gmlp_fail_cl(&ctx->err, call, e);
}

gmlp_status gmlp_kernel_launch(gmlp_context *ctx, const gmlp_kernel *k, cl_uint dims, const size_t *global,
                               const size_t *local)
{
    return gmlp_kernel_launch_as(ctx, k, k->label, dims, global, local);
}

gmlp_status gmlp_kernel_launch_as(gmlp_context *ctx, const gmlp_kernel *k, const char *label, cl_uint dims,
                                  const size_t *global, const size_t *local)
{
    const size_t moves = ctx->moves;
    ctx->moves = 0;
    for (cl_uint d = 0; d < dims; d++)
        if (global[d] == 0)
            return GMLP_OK;
    if (ctx->rec)
        return gmlp_record_launch(ctx, k, dims, global, local);
    cl_event ev = NULL;
    cl_int e = clEnqueueNDRangeKernel(ctx->queue, k->k, dims, NULL, global, local, 0, NULL,
                                      ctx->set.profiling ? &ev : NULL);
    if (e != CL_SUCCESS) {
        char call[200];
        snprintf(call, sizeof call, "clEnqueueNDRangeKernel(%s)", k->label);
        return gmlp_fail_cl(&ctx->err, call, e);
    }
    return ev ? gmlp_profile_record(ctx, label, NULL, ev, moves) : GMLP_OK;
}
