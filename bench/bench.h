/* Shared by gmlp-bench's parts: random-weight model files and timing. */
#ifndef GMLP_BENCH_H
#define GMLP_BENCH_H

#include <jansson.h>
#include <stdio.h>

#include "gmlp.h"

double bench_now(void);
/* The median of n timings (sorted in place); *spread (may be NULL): max - min. */
double bench_median(double *times, int n, double *spread);
/* A safetensors file in memory with random weights for config c. */
unsigned char *bench_random_model(const gmlp_config *c, size_t *size);

/* Language models: tokens/s of the full-sequence pass, of generation with
 * the decoding state (cached) and of generation by a full pass per token
 * (uncached, what g-mlp-pytorch's AutoregressiveWrapper does). */
void bench_lm(const char *dev_spec, int tiny, int runs, json_t *rows, FILE *csv);

/* images/s against batch per device, model, weights and GEMM backend, as an SVG file; nonzero on failure. */
int bench_svg(json_t *rows, const char *path);

#endif
