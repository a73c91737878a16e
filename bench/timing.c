#include "timing.h"

#include <stdlib.h>
#include <time.h>

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *times, int n, double *spread)
{
    qsort(times, (size_t)n, sizeof *times, cmp_double);
    if (spread)
        *spread = times[n - 1] - times[0];
    return times[n / 2];
}
