/* The library's own host allocations.  A test build (-Dalloc_fail=true,
 * which defines GMLP_ALLOC_FAIL) counts them and makes a chosen one fail, as
 * dav1d's alloc_fail.c does, so that every GMLP_ERR_HOST_MEMORY path runs
 * (tests/test_alloc_fail.c); elsewhere they are the C library's. */
#ifndef GMLP_ALLOC_H
#define GMLP_ALLOC_H

#include <stddef.h>
#include <stdlib.h>

#ifdef GMLP_ALLOC_FAIL
void *gmlp_malloc(size_t size);
void *gmlp_calloc(size_t n, size_t size);
void *gmlp_realloc(void *p, size_t size);
/* Restarts the count: the n-th allocation from now fails, the others
 * succeed (n == 0: none fails); jansson's count too from then on
 * (json_set_alloc_funcs).  For whole programs, $GMLP_TEST_ALLOC_FAIL=N sets
 * n at load, without jansson's. */
void gmlp_alloc_fail_at(unsigned long n);
/* Allocations since the count restarted, the failed one included. */
unsigned long gmlp_alloc_count(void);
/* From gmlp_alloc_exempt(1) to (0), the calling thread's allocations are
 * neither counted nor failed (gmlp_json_loadb says why). */
void gmlp_alloc_exempt(int on);
#else
static inline void *gmlp_malloc(size_t size) { return malloc(size); }
static inline void *gmlp_calloc(size_t n, size_t size) { return calloc(n, size); }
static inline void *gmlp_realloc(void *p, size_t size) { return realloc(p, size); }
static inline void gmlp_alloc_exempt(int on) { (void)on; }
#endif

#endif
