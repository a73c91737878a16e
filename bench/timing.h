/* Wall-clock timing shared by gmlp-bench's parts and bench/gemm_shapes.c. */
#ifndef GMLP_BENCH_TIMING_H
#define GMLP_BENCH_TIMING_H

/* Seconds on the monotonic clock. */
double bench_now(void);
/* The median of n timings (sorted in place); *spread (may be NULL): max - min. */
double bench_median(double *times, int n, double *spread);

#endif
