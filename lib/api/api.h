/* What the public entry points (lib/api) share: the environment (env.c, the
 * only reader of it), the options' size rule, and the error of the calls
 * without a context. */
#ifndef GMLP_API_INTERNAL_H
#define GMLP_API_INTERNAL_H

#include <stddef.h>

#include "cl/context.h"

/* ctx's settings from opts (NULL: the defaults) over the environment; *device:
 * the device spec to open (opts, else $GMLP_DEVICE; may be NULL). */
gmlp_status gmlp_env_settings(const gmlp_context_options *opts, gmlp_settings *out, const char **device,
                              gmlp_error *err);
/* $GMLP_DEVICE, or NULL. */
const char *gmlp_env_device(void);
/* $GMLP_LOG as a level. */
gmlp_log_level gmlp_env_log_level(void);

/* The calling thread's error, logging where gmlp_set_log (or $GMLP_LOG) says:
 * where a call without a context reports. */
gmlp_error *gmlp_api_error(void);

/* gmlp_fail on ctx->err, taking ctx->lock: for the checks an entry point
 * makes before it takes the lock.  ctx->err is written and read under the
 * lock only (gmlp_last_error too), as other threads may be in calls on ctx. */
gmlp_status gmlp_ctx_fail(gmlp_context *ctx, gmlp_status st, const char *fmt, ...) GMLP_PRINTF(3, 4);

/* Copies a caller's sized struct (whose first member is its size) over
 * defaults of size bytes: only the fields the caller's struct has.  0 when
 * src->size cannot be a size of it: under min (its first sized version's
 * size) or over 64 KiB (an uninitialised one). */
int gmlp_sized_in(void *defaults, size_t size, size_t min, const void *src);
/* Whether given can be the size of a caller's sized struct whose first
 * sized version was min bytes: not below, and not past 64 KiB (an
 * uninitialised one). */
int gmlp_size_ok(size_t given, size_t min);
/* gmlp_sized_in for an options struct: a size and at least one field. */
int gmlp_options_in(void *defaults, size_t size, const void *src);
/* The end of gmlp_config's first sized version (0.3.0): what a caller's
 * config.size is at least. */
#define GMLP_CONFIG_MIN_SIZE (offsetof(gmlp_config, stem_norm) + sizeof(int))

#endif
