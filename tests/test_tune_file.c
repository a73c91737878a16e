/* The tuning-file reader alone (no device): tests/data/tune's files for the
 * fuzz target's made-up device, valid.json taken with its four winners (one
 * of them for bf16 products) and
 * every other file refused with a reason (v1_format.json, the format before
 * tilings had names, with a pointer to tuning again); then every prefix of
 * valid.json and the file for another driver refused.  argv[1]: tests/data/tune. */
#include <string.h>

#include "check.h"
#include "ops/gemm_tune.h"

static const gmlp_devinfo dev = {.platform_name = "Fuzz Platform", .name = "Fuzz Device", .vendor = "Fuzz Vendor",
                                 .version = "OpenCL 3.0 Fuzz", .driver = "1.0", .compute_units = 4,
                                 .local_mem = 32768, .max_wg = 256, .max_wi = {256, 256, 64}};

static char *slurp(const char *dir, const char *name, size_t *n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    char *buf = calloc(1, 1 << 16);
    *n = f && buf ? fread(buf, 1, (1 << 16) - 1, f) : 0;
    if (f)
        fclose(f);
    return buf;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    gmlp_tuned t;
    char why[200];
    size_t n;
    char *valid = slurp(argv[1], "valid.json", &n);
    CHECK(n > 0 && gmlp_tune_parse(&dev, valid, n, &t, why, sizeof why), "valid.json taken");
    size_t set = 0;
    for (size_t s = 0; s < GMLP_TUNE_SLOTS; s++)
        set += (size_t)t.set[s];
    size_t large = gmlp_tune_slot(GMLP_GEMM_LARGE, GMLP_ELEM_F32, GMLP_ELEM_F32, 0, 1, GMLP_GEMM_FP32);
    size_t narrow = gmlp_tune_slot(GMLP_GEMM_NARROW, GMLP_ELEM_F32, GMLP_ELEM_F32, 0, 0, GMLP_GEMM_FP32);
    size_t half = gmlp_tune_slot(GMLP_GEMM_SMALL, GMLP_ELEM_F32, GMLP_ELEM_F16, 0, 1, GMLP_GEMM_FP32);
    size_t bf16 = gmlp_tune_slot(GMLP_GEMM_LARGE, GMLP_ELEM_F32, GMLP_ELEM_F32, 0, 1, GMLP_GEMM_BF16); /* beside fp32's, its own */
    CHECK(set == 4 && t.set[large] && t.choice[large].tiling &&
              !strcmp(t.choice[large].tiling->name, "tiled_128x128x2_8x8") && t.set[narrow] &&
              t.choice[narrow].clblast && t.set[half] && t.choice[half].tiling &&
              t.choice[half].tiling == gmlp_gemm_tiling_named("direct_4x64_1x4_v4") && t.set[bf16] &&
              t.choice[bf16].tiling == gmlp_gemm_tiling_named("tiled_64x64x8_4x4"),
          "valid.json's winners: %zu", set);
    size_t round_trips = 0; /* every slot is one form, named back to the same slot */
    for (size_t s = 0; s < GMLP_TUNE_SLOTS; s++) {
        const gmlp_tune_key k = gmlp_tune_slot_key(s);
        round_trips += gmlp_tune_slot(k.cls, k.a, k.b, k.ta, k.tb, k.precision) == s;
    }
    CHECK(round_trips == GMLP_TUNE_SLOTS, "%zu of %d slots round-trip through their keys", round_trips,
          (int)GMLP_TUNE_SLOTS);
    const struct {
        const char *file, *why;
    } bad[] = {{"clblast_half.json", "16-bit"},         {"unknown_tiling.json", "tiled_96x64x8_4x4"},
               {"slot_twice.json", "two winners"},           {"unnamed_tiling.json", "names no tiling"},
               {"v1_format.json", "gmlp-tune-1, not"},      {"clblast_tf32.json", "another precision"},
               {"unknown_precision.json", "precision"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t m;
        char *text = slurp(argv[1], bad[i].file, &m);
        why[0] = 0;
        CHECK(m > 0 && !gmlp_tune_parse(&dev, text, m, &t, why, sizeof why) && strstr(why, bad[i].why), "%s refused: %s",
              bad[i].file, why);
        free(text);
    }
    int prefixes_taken = 0;
    size_t body = n;
    while (body && (valid[body - 1] == '\n' || valid[body - 1] == ' '))
        body--; /* the JSON text itself, without the trailing newline */
    for (size_t k = 0; k < body; k++)
        prefixes_taken += gmlp_tune_parse(&dev, valid, k, &t, why, sizeof why);
    CHECK(prefixes_taken == 0, "%d proper prefixes of valid.json taken", prefixes_taken);
    gmlp_devinfo other = dev;
    snprintf(other.driver, sizeof other.driver, "1.1");
    CHECK(!gmlp_tune_parse(&other, valid, n, &t, why, sizeof why) && strstr(why, "driver"), "another driver: %s", why);
    other = dev;
    other.max_wg = 64; /* 128 x 128 tiles of 8 x 8 need 256 work-items */
    CHECK(!gmlp_tune_parse(&other, valid, n, &t, why, sizeof why) && strstr(why, "fit"), "smaller device: %s", why);
    free(valid);
    return check_summary("tune-file");
}
