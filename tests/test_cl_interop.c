/* gmlp on the caller's OpenCL objects (gmlp_cl.h): a context made from our own
 * cl_context, device and queue; classification from a cl_mem of images into
 * a cl_mem of logits that waits for a user event and signals its own; equal
 * to gmlp_classify on host memory, also for a batch over the chunk size;
 * refusals (objects that do not belong together, buffers too small, of
 * another context or one buffer for both); and the caller's objects neither released nor retained;
 * gmlp_context_cl_objects on both kinds of context (the device path on the library's own objects).
 * usage: test_cl_interop MODEL */
#include <string.h>
#include <time.h>

#include "check.h"
#include "gmlp_cl.h"

static cl_uint refs_context(cl_context c)
{
    cl_uint n = 0;
    clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof n, &n, NULL);
    return n;
}

static cl_uint refs_queue(cl_command_queue q)
{
    cl_uint n = 0;
    clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof n, &n, NULL);
    return n;
}

/* The first GPU, else the first device: the library's default. */
static cl_device_id pick_device(void)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0)
        return NULL;
    cl_device_id first = NULL;
    for (cl_uint p = 0; p < np && p < 16; p++) {
        cl_device_id d;
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_GPU, 1, &d, &nd) == CL_SUCCESS && nd)
            return d;
        if (!first && clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 1, &d, &nd) == CL_SUCCESS && nd)
            first = d;
    }
    return first;
}

static cl_mem buffer(cl_context c, size_t floats, const float *host)
{
    cl_int e;
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), floats * sizeof(float),
                              (void *)host, &e);
    if (e != CL_SUCCESS) {
        printf("FAIL: clCreateBuffer: %d\n", e);
        exit(1);
    }
    return m;
}

/* Logits through the device path (waiting for a user event) against the host path. */
static void compare_paths(gmlp_model *dev_model, cl_context cl, cl_command_queue q, gmlp_model *host_model,
                          size_t batch)
{
    gmlp_config cfg = {.size = sizeof cfg};
    gmlp_model_config(host_model, &cfg);
    size_t per = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w, nc = (size_t)cfg.num_classes;
    float *img = malloc(batch * per * sizeof *img), *want = malloc(batch * nc * sizeof *want),
          *got = malloc(batch * nc * sizeof *got);
    unsigned s = 7;
    for (size_t i = 0; i < batch * per; i++)
        img[i] = (float)((s = s * 1103515245u + 12345u) >> 16 & 0xffff) / 32768.0f - 1.0f;
    CHECK(gmlp_classify(host_model, img, batch, want) == GMLP_OK, "host path: %s", gmlp_last_error(NULL));
    cl_mem dimg = buffer(cl, batch * per, img), dlog = buffer(cl, batch * nc, NULL);
    cl_int e;
    cl_event gate = clCreateUserEvent(cl, &e), done = NULL;
    gmlp_status st = gmlp_classify_cl(dev_model, dimg, batch, dlog, 1, &gate, &done);
    CHECK(st == GMLP_OK && done, "batch %zu: gmlp_classify_cl: %s", batch, gmlp_status_string(st));
    cl_int status = CL_COMPLETE;
    if (done)
        clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    CHECK(status != CL_COMPLETE, "batch %zu: done before the event it waits for", batch);
    clSetUserEventStatus(gate, CL_COMPLETE);
    if (done) {
        CHECK(clWaitForEvents(1, &done) == CL_SUCCESS, "waiting for done");
        clReleaseEvent(done);
    }
    clReleaseEvent(gate);
    CHECK(clEnqueueReadBuffer(q, dlog, CL_TRUE, 0, batch * nc * sizeof *got, got, 0, NULL, NULL) == CL_SUCCESS,
          "read logits");
    double worst = 0;
    for (size_t i = 0; i < batch * nc; i++)
        worst = fmax(worst, fabs((double)got[i] - want[i]));
    CHECK(worst <= 1e-5, "batch %zu: device path differs from the host path by %g", batch, worst);
    printf("batch %zu: device path vs host path: max |diff| %g\n", batch, worst);
    clReleaseMemObject(dimg);
    clReleaseMemObject(dlog);
    free(img), free(want), free(got);
}

static void refusals(gmlp_context *ctx, gmlp_model *m, cl_context cl, cl_device_id dev, cl_command_queue q,
                     const gmlp_config *cfg)
{
    gmlp_context *x = (gmlp_context *)1;
    CHECK(gmlp_context_create_cl(NULL, dev, q, NULL, &x) == GMLP_ERR_INVALID_ARGUMENT && !x &&
              strstr(gmlp_last_error(NULL), "cl_context"),
          "NULL cl_context: %s", gmlp_last_error(NULL));
    cl_int e;
    cl_context other = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    CHECK(gmlp_context_create_cl(other, dev, q, NULL, &x) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(NULL), "another cl_context"),
          "queue of another context: %s", gmlp_last_error(NULL));
    cl_command_queue ooo = clCreateCommandQueue(cl, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &e);
    if (e == CL_SUCCESS) { /* only where the device offers out-of-order queues */
        CHECK(gmlp_context_create_cl(cl, dev, ooo, NULL, &x) == GMLP_ERR_INVALID_ARGUMENT &&
                  strstr(gmlp_last_error(NULL), "in-order"),
              "out-of-order queue: %s", gmlp_last_error(NULL));
        clReleaseCommandQueue(ooo);
    }
    size_t per = (size_t)cfg->in_chans * cfg->img_h * cfg->img_w, nc = (size_t)cfg->num_classes;
    cl_mem img = buffer(cl, 2 * per, NULL), small = buffer(cl, 2 * nc - 1, NULL), foreign = buffer(other, 2 * nc, NULL);
    cl_event done = (cl_event)1;
    CHECK(gmlp_classify_cl(m, img, 2, small, 0, NULL, &done) == GMLP_ERR_INVALID_ARGUMENT && !done &&
              strstr(gmlp_last_error(ctx), "holds"),
          "logits buffer too small: %s", gmlp_last_error(ctx));
    CHECK(gmlp_classify_cl(m, img, 3, small, 0, NULL, NULL) == GMLP_ERR_INVALID_ARGUMENT, "images buffer too small");
    CHECK(gmlp_classify_cl(m, img, 2, foreign, 0, NULL, NULL) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(ctx), "another cl_context"),
          "a buffer of another context: %s", gmlp_last_error(ctx));
    CHECK(gmlp_classify_cl(m, img, 2, img, 0, NULL, NULL) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(ctx), "same buffer"),
          "images and logits in one buffer: %s", gmlp_last_error(ctx));
    CHECK(gmlp_classify_cl(m, img, 2, small, 2, NULL, NULL) == GMLP_ERR_INVALID_ARGUMENT, "events to wait for, NULL");
    CHECK(gmlp_classify_cl(m, img, 0, img, 0, NULL, NULL) == GMLP_ERR_INVALID_ARGUMENT, "batch 0");
    clReleaseMemObject(img);
    clReleaseMemObject(small);
    clReleaseMemObject(foreign);
    clReleaseContext(other);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_cl_interop MODEL\n");
        return 2;
    }
    cl_device_id dev = pick_device();
    if (!dev) {
        printf("SKIP: no OpenCL device\n");
        return 77;
    }
    cl_int e;
    cl_context cl = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    cl_command_queue q = cl ? clCreateCommandQueue(cl, dev, 0, &e) : NULL;
    if (!q) {
        printf("FAIL: cannot make our own context and queue: %d\n", e);
        return 1;
    }
    cl_uint ctx_refs = refs_context(cl), q_refs = refs_queue(q);

    gmlp_context *ctx, *host_ctx;
    gmlp_model *m, *host_model;
    CHECK(gmlp_context_create_cl(cl, dev, q, NULL, &ctx) == GMLP_OK, "create on our objects: %s",
          gmlp_last_error(NULL));
    if (gmlp_model_load(ctx, argv[1], &m) != GMLP_OK || gmlp_context_create(NULL, &host_ctx) != GMLP_OK ||
        gmlp_model_load(host_ctx, argv[1], &host_model) != GMLP_OK) {
        printf("FAIL: %s / %s\n", gmlp_last_error(ctx), gmlp_last_error(NULL));
        return 1;
    }
    gmlp_config cfg = {.size = sizeof cfg};
    gmlp_model_config(m, &cfg);
    compare_paths(m, cl, q, host_model, 3);
    compare_paths(m, cl, q, host_model, 1100); /* two chunks: offsets into the caller's buffers */
    refusals(ctx, m, cl, dev, q, &cfg);

    /* gmlp_context_cl_objects: a borrowing context lends the caller's objects back,
     * the library's own context its own, on which the device path works as well */
    cl_context got_cl = NULL, own_cl = NULL;
    cl_device_id got_dev = NULL;
    cl_command_queue got_q = NULL, own_q = NULL;
    CHECK(gmlp_context_cl_objects(ctx, &got_cl, &got_dev, &got_q) == GMLP_OK && got_cl == cl && got_dev == dev &&
              got_q == q,
          "gmlp_context_cl_objects of a borrowing context: the caller's objects");
    CHECK(gmlp_context_cl_objects(host_ctx, &own_cl, NULL, &own_q) == GMLP_OK && own_cl && own_q && own_cl != cl,
          "gmlp_context_cl_objects of the library's own context (NULL outputs skipped)");
    if (own_cl && own_q)
        compare_paths(host_model, own_cl, own_q, host_model, 5);
    CHECK(gmlp_context_cl_objects(NULL, &got_cl, NULL, NULL) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(NULL), "NULL context"),
          "gmlp_context_cl_objects(NULL): refused");

    gmlp_model_free(m);
    gmlp_context_destroy(ctx);
    gmlp_model_free(host_model);
    gmlp_context_destroy(host_ctx);
    /* a driver may hold the queue a moment after clFinish returns (PoCL's
     * worker threads drop their event references asynchronously) */
    for (int i = 0; i < 200 && refs_queue(q) != q_refs; i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    CHECK(refs_context(cl) == ctx_refs && refs_queue(q) == q_refs,
          "the caller's objects keep their reference counts (context %u -> %u, queue %u -> %u)", ctx_refs,
          refs_context(cl), q_refs, refs_queue(q));
    CHECK(clFinish(q) == CL_SUCCESS, "our queue still works after gmlp_context_destroy");
    clReleaseCommandQueue(q);
    clReleaseContext(cl);
    return check_summary("test_cl_interop");
}
