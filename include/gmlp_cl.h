/*
 * gmlp_cl.h — gmlp on the caller's own OpenCL objects, for pipelines that keep
 * their data on the device: no host copies, events in and out.
 *
 *     gmlp_context *ctx;
 *     gmlp_context_create_cl(my_context, my_device, my_queue, NULL, &ctx);
 *     gmlp_model_load(ctx, "model.safetensors", &model);
 *     // images: a cl_mem of my_context holding batch x C x H x W normalised floats
 *     cl_event done;
 *     gmlp_classify_cl(model, images, batch, logits, 1, &images_ready, &done);
 *     ...                                       // more work on my_queue after `done`
 *
 * A context of the library's own (gmlp_context_create) lends its objects the
 * same way (gmlp_context_cl_objects), for callers that upload once and
 * classify many times.
 *
 * The library enqueues on the caller's queue (in order) and never releases the
 * caller's cl_context, device, queue or buffers: they must outlive the
 * gmlp_context (gmlp_context_destroy waits for the queue, then leaves it alone).
 */
#ifndef GMLP_CL_H
#define GMLP_CL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "gmlp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A context on cl (which holds device) that enqueues on queue (of cl and
 * device, not out of order).  opts: as gmlp_context_create_ex (its device
 * field is ignored); NULL for the defaults. */
GMLP_API gmlp_status gmlp_context_create_cl(cl_context cl, cl_device_id device, cl_command_queue queue,
                                            const gmlp_context_options *opts, gmlp_context **out);

/* The OpenCL objects ctx runs on (its own, or the caller's of
 * gmlp_context_create_cl), for buffers to give gmlp_classify_cl and work to
 * order around it on the queue.  They stay ctx's: valid until
 * gmlp_context_destroy, not to be released (clRetain* them to keep them
 * longer).  Any output pointer may be NULL. */
GMLP_API gmlp_status gmlp_context_cl_objects(const gmlp_context *ctx, cl_context *cl, cl_device_id *device,
                                             cl_command_queue *queue);

/* gmlp_classify from device memory to device memory: images (batch x in_chans
 * x img_h x img_w floats, normalised) and logits (batch x num_classes floats)
 * are two buffers of the context's cl_context, of at least that size.  The work
 * waits for the n_wait events of wait (may be 0 and NULL) and is only
 * enqueued: nothing waits for the device.  done (may be NULL) receives an
 * event that completes with the logits; the caller releases it.  On failure
 * *done is NULL and the logits are undefined. */
GMLP_API gmlp_status gmlp_classify_cl(gmlp_model *model, cl_mem images, size_t batch, cl_mem logits,
                                      cl_uint n_wait, const cl_event *wait, cl_event *done);

#ifdef __cplusplus
}
#endif

#endif
