/* Host f32 <-> f16 conversions against an independent oracle: the nearest of
 * the two bracketing halves, found by search in a table of every half and
 * compared in double, ties to the even one.  Covers every half, every
 * rounding boundary (midpoints and their float neighbours), overflow, and
 * random floats of every magnitude.  f32 -> bfloat16 the same way (the two
 * bfloat16 values around a float, compared in double) on random floats,
 * midpoints, overflow and NaN. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "core/half.h"

static double table[0x7c01]; /* values of the halves 0 .. 0x7c00, the last standing in for 2^16 */

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint16_t oracle(float f)
{
    uint16_t sign = (uint16_t)(bits_of(f) >> 16 & 0x8000);
    double a = fabs((double)f);
    if (a >= 65536.0)
        return sign | 0x7c00;
    size_t lo = 0, hi = 0x7c00; /* table[lo] <= a < table[hi] */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (table[mid] <= a)
            lo = mid;
        else
            hi = mid;
    }
    double dlo = a - table[lo], dhi = table[hi] - a;
    return sign | (uint16_t)(dlo < dhi || (dlo == dhi && !(lo & 1)) ? lo : hi);
}

static void expect(float f, const char *what)
{
    uint16_t got = gmlp_float_to_half(f), want = oracle(f);
    CHECK(got == want, "%s: %.9g -> 0x%04x, want 0x%04x", what, (double)f, got, want);
}

/* f to bfloat16 as the oracle has it: of the two bfloat16 values around |f| (its bits truncated, and
 * the next; past the largest, infinity standing in for 2^128), the nearer in double, ties to the even */
static uint16_t bf16_oracle(float f)
{
    const uint32_t u = bits_of(f), sign = u & 0x80000000u, a = u & 0x7fffffffu, lo = a & 0xffff0000u;
    if (lo == a)
        return (uint16_t)(u >> 16);
    const uint32_t hi = lo + 0x10000u;
    const double x = fabs((double)f), vlo = (double)float_of(lo), vhi = hi >= 0x7f800000u ? 0x1p128 : (double)float_of(hi);
    const uint32_t pick = x - vlo < vhi - x ? lo : x - vlo > vhi - x ? hi : (lo & 0x10000u) ? hi : lo;
    return (uint16_t)((sign | pick) >> 16);
}

static void bf16_checks(void)
{
    size_t bad = 0, n = 0;
    unsigned seed = 7;
    for (int i = 0; i < 2000000; i++, n++) { /* any finite float, and the midpoints between bfloat16 values */
        seed = seed * 1664525u + 1013904223u;
        uint32_t u = seed % 0x7f800000u | (seed & 1u) << 31;
        if (i % 4 == 0)
            u = (u & 0xffff0000u) | 0x8000u;
        bad += gmlp_float_to_bf16(float_of(u)) != bf16_oracle(float_of(u));
    }
    CHECK(bad == 0, "bfloat16: %zu of %zu floats rounded otherwise than the oracle", bad, n);
    CHECK(gmlp_float_to_bf16(0x1.fffffep127f) == 0x7f80 && gmlp_float_to_bf16(-INFINITY) == 0xff80 &&
              gmlp_float_to_bf16(0x1.fefffep127f) == 0x7f7f,
          "bfloat16 overflow to infinity, and the largest");
    CHECK(isnan(gmlp_bf16_to_float(gmlp_float_to_bf16(NAN))) && isnan(gmlp_bf16_to_float(gmlp_float_to_bf16(
              float_of(0x7f800001u)))),
          "bfloat16 NaN stays NaN, a signalling one's low payload too");
    CHECK(gmlp_bf16_to_float(0x3f80) == 1.0f && gmlp_bf16_to_float(0xc000) == -2.0f, "bfloat16 values");
}

int main(void)
{
    for (uint32_t h = 0; h < 0x7c00; h++)
        table[h] = gmlp_half_to_float((uint16_t)h);
    table[0x7c00] = 65536.0;
    /* the table is the exact values: 2^-24 steps below 2^-14, then 10 mantissa bits */
    int bad = 0;
    for (uint32_t h = 0; h < 0x7c00; h++) {
        uint32_t e = h >> 10, m = h & 0x3ff;
        double want = e ? ldexp(1.0 + m / 1024.0, (int)e - 15) : ldexp((double)m, -24);
        bad += table[h] != want;
    }
    CHECK(bad == 0, "%d halves decode wrongly", bad);

    /* every half survives the round trip; NaNs stay NaN */
    int trips = 0;
    for (uint32_t h = 0; h <= 0xffff; h++) {
        float f = gmlp_half_to_float((uint16_t)h);
        uint16_t back = gmlp_float_to_half(f);
        int nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
        trips += nan ? !(isnan(f) && (back & 0x7c00) == 0x7c00 && (back & 0x3ff)) : back != h;
    }
    CHECK(trips == 0, "%d halves do not survive f16 -> f32 -> f16", trips);

    /* each midpoint between neighbours and the floats on either side of it */
    for (uint32_t h = 0; h < 0x7c00; h++) {
        float mid = (float)((table[h] + table[h + 1]) / 2); /* 12 significant bits: exact in float */
        expect(mid, "midpoint");
        expect(nextafterf(mid, 0.0f), "below a midpoint");
        expect(nextafterf(mid, INFINITY), "above a midpoint");
        expect(-mid, "negative midpoint");
    }

    /* random floats of every magnitude from 2^-30 to 2^17 */
    unsigned seed = 99;
    for (int i = 0; i < 2000000; i++) {
        seed = seed * 1664525u + 1013904223u;
        uint32_t u = 0x30800000u + (seed >> 1) % (0x48000000u - 0x30800000u);
        expect(float_of(u | (seed & 1u) << 31), "random");
    }

    CHECK(gmlp_float_to_half(65504.0f) == 0x7bff && gmlp_float_to_half(65519.996f) == 0x7bff, "largest half");
    CHECK(gmlp_float_to_half(65520.0f) == 0x7c00 && gmlp_float_to_half(-1e30f) == 0xfc00, "overflow to infinity");
    CHECK(gmlp_float_to_half(INFINITY) == 0x7c00 && gmlp_float_to_half(-INFINITY) == 0xfc00, "infinities");
    CHECK(gmlp_float_to_half(-0.0f) == 0x8000 && gmlp_float_to_half(1.0f) == 0x3c00, "-0 and 1");
    CHECK(gmlp_float_to_half(0x1p-25f) == 0 && gmlp_float_to_half(0x1.000002p-25f) == 1, "smallest subnormal");
    CHECK(isnan(gmlp_half_to_float(gmlp_float_to_half(NAN))), "NaN");
    bf16_checks();
    return check_summary("test_half");
}
