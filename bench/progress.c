/* gmlp-bench's progress on stderr: a line as each configuration starts, with
 * the time so far and an estimate of the time left, and a last line with the
 * count and the total time. */
#include <math.h>
#include <stdio.h>

#include "bench.h"

/* "42 s", "3 min 05 s", "2 h 10 min" */
static const char *duration(double secs, char *buf, size_t size)
{
    long s = lround(secs);
    if (s < 60)
        snprintf(buf, size, "%ld s", s);
    else if (s < 3600)
        snprintf(buf, size, "%ld min %02ld s", s / 60, s % 60);
    else
        snprintf(buf, size, "%ld h %02ld min", s / 3600, s / 60 % 60);
    return buf;
}

/* The seconds the configurations left will take: t = c + k w fitted by least
 * squares to those finished (n of them), each coefficient kept >= 0. */
static double time_left(const bench_progress *p, int n)
{
    double det = n * p->sww - p->sw * p->sw, k = det > 1e-9 * n * p->sww ? (n * p->swt - p->sw * p->st) / det : -1;
    double c = k >= 0 ? (p->st - k * p->sw) / n : -1;
    if (k < 0)
        k = 0, c = p->st / n;
    else if (c < 0)
        c = 0, k = p->st / p->sw;
    return c * (p->steps - n) + k * (p->total - p->done);
}

/* The previous configuration's work and seconds into the fit's sums. */
static double previous_ended(bench_progress *p)
{
    double now = bench_now();
    if (p->step) {
        double w = p->last_work, t = now - p->last_start;
        p->sw += w, p->st += t, p->sww += w * w, p->swt += w * t;
        p->done += w;
    }
    return now;
}

void bench_progress_start(bench_progress *p, const char *what, const char *dev, double work)
{
    double now = previous_ended(p);
    p->last_start = now, p->last_work = work;
    char so_far[32], left[32];
    if (p->step)
        fprintf(stderr, BENCH_PROGRAM ": [%d/%d] %s on %s: %s so far, about %s left\n", p->step + 1, p->steps, what,
                dev, duration(now - p->t0, so_far, sizeof so_far),
                duration(time_left(p, p->step), left, sizeof left));
    else
        fprintf(stderr, BENCH_PROGRAM ": [1/%d] %s on %s: the time left is estimated after this one\n", p->steps,
                what, dev);
    p->step++;
}

void bench_progress_end(bench_progress *p, int failed)
{
    double now = previous_ended(p);
    char took[32];
    fprintf(stderr, BENCH_PROGRAM ": %d configuration%s in %s%s\n", p->step, p->step == 1 ? "" : "s",
            duration(now - p->t0, took, sizeof took), failed ? ", some failed (said above)" : "");
}
