/* The allocation-failure hook of test builds (-Dalloc_fail=true; see alloc.h). */
#include "alloc.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_ulong count, fail_at;
static unsigned long env_fail_at; /* $GMLP_TEST_ALLOC_FAIL, reported at exit */
static _Thread_local int exempt;

static int fails(void)
{
    if (exempt)
        return 0;
    unsigned long n = atomic_fetch_add(&count, 1) + 1;
    return n == atomic_load(&fail_at);
}

void *gmlp_malloc(size_t size)
{
    return fails() ? NULL : malloc(size);
}

void *gmlp_calloc(size_t n, size_t size)
{
    return fails() ? NULL : calloc(n, size);
}

void *gmlp_realloc(void *p, size_t size)
{
    return fails() ? NULL : realloc(p, size);
}

void gmlp_alloc_fail_at(unsigned long n)
{
    json_set_alloc_funcs(gmlp_malloc, free); /* the library's JSON (its decoder aside: gmlp_json_loadb) */
    atomic_store(&fail_at, n);
    atomic_store(&count, 0);
}

unsigned long gmlp_alloc_count(void)
{
    return atomic_load(&count);
}

void gmlp_alloc_exempt(int on)
{
    exempt = on;
}

/* A program run with $GMLP_TEST_ALLOC_FAIL=N says on stderr whether its N-th
 * allocation came (tests/test_alloc_fail_apps.sh ends its sweep when not). */
static void report(void)
{
    unsigned long n = gmlp_alloc_count();
    fprintf(stderr, "gmlp-alloc-fail: %lu allocations, number %lu %s\n", n, env_fail_at,
            n >= env_fail_at ? "failed" : "never came");
}

/* A program run with $GMLP_TEST_ALLOC_FAIL=N: the library's own allocations
 * only, as jansson's allocator is the process's and the program's JSON its
 * own. */
__attribute__((constructor)) static void from_environment(void)
{
    const char *v = getenv("GMLP_TEST_ALLOC_FAIL");
    if (v && (env_fail_at = strtoul(v, NULL, 10)) > 0) {
        atomic_store(&fail_at, env_fail_at);
        atexit(report);
    }
}
