/* Token sampling on the host (gmlp_sample). */
#ifndef GMLP_SAMPLE_H
#define GMLP_SAMPLE_H

#include "core/error.h"

/* One token from logits under o's temperature, top_k and top_p, advancing
 * *rng by one draw (argument checks included). */
gmlp_status gmlp_sample_token(const float *logits, int vocab, const gmlp_generate_options *o, uint64_t *rng,
                              int32_t *token, gmlp_error *err);

#endif
