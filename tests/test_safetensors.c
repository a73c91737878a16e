/* The safetensors parser and the config inference, without any OpenCL
 * device (so valgrind can run it): dtype conversions, hand-built edge cases,
 * every valid fixture and the whole broken-file corpus. */
#include <dirent.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "format/safetensors.h"
#include "model/model.h"

/* Parser, then config inference and tensor checks, as gmlp_model_load does. */
static gmlp_status validate(const unsigned char *buf, size_t size, gmlp_error *err)
{
    gmlp_st_file f;
    gmlp_status st = gmlp_st_parse(buf, size, &f, err);
    if (st != GMLP_OK)
        return st;
    gmlp_config cfg;
    st = gmlp_config_infer(&f, &cfg, err);
    if (st == GMLP_OK)
        st = gmlp_config_check_tensors(&f, &cfg, err);
    gmlp_st_free(&f);
    return st;
}

static void test_half(void)
{
    int bad = 0;
    for (unsigned h = 0; h < 65536; h++) {
        uint8_t bytes[2] = {(uint8_t)h, (uint8_t)(h >> 8)};
        gmlp_st_tensor t = {.dtype = GMLP_DT_F16, .numel = 1, .data = bytes};
        float got;
        gmlp_st_to_f32(&t, &got);
        int e = (h >> 10) & 31, m = h & 1023;
        double want = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
        if (h & 0x8000)
            want = -want;
        bad += isnan(want) ? !isnan(got) : (double)got != want || !signbit(got) != !signbit(want);
    }
    CHECK(bad == 0, "%d of 65536 half values convert wrongly", bad);
    uint8_t bf[4] = {0x80, 0x3f, 0x49, 0xc0}; /* 1.0, -3.140625 */
    gmlp_st_tensor t = {.dtype = GMLP_DT_BF16, .numel = 2, .data = bf};
    float got[2];
    CHECK(gmlp_st_to_f32(&t, got) == 0 && got[0] == 1.0f && got[1] == -3.140625f, "bf16: %g %g", got[0], got[1]);
    t.dtype = GMLP_DT_I32;
    CHECK(gmlp_st_to_f32(&t, got) == -1, "integer dtypes are not converted");
}

/* 8-byte length + header (padded to pad bytes) + data */
static unsigned char *build(const char *header, size_t pad, const void *data, size_t dlen, size_t *size)
{
    size_t hlen = strlen(header) > pad ? strlen(header) : pad;
    unsigned char *buf = malloc(8 + hlen + dlen + 1);
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
    memset(buf + 8, ' ', hlen);
    memcpy(buf + 8, header, strlen(header));
    if (dlen)
        memcpy(buf + 8 + hlen, data, dlen);
    *size = 8 + hlen + dlen;
    return buf;
}

static void expect_parse(const char *what, const char *header, size_t pad, size_t dlen, gmlp_status want,
                         const char *fragment)
{
    static const unsigned char zeros[64];
    size_t size;
    unsigned char *buf = build(header, pad, zeros, dlen, &size);
    gmlp_st_file f;
    gmlp_error err = {.msg = ""};
    gmlp_status st = gmlp_st_parse(buf, size, &f, &err);
    CHECK(st == want, "%s: got %s (%s)", what, gmlp_status_string(st), err.msg);
    CHECK(!fragment || strcasestr(err.msg, fragment), "%s: message lacks '%s': %s", what, fragment, err.msg);
    if (st == GMLP_OK)
        gmlp_st_free(&f);
    free(buf);
}

static void test_edge_cases(void)
{
    expect_parse("padded header", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 80, 8, GMLP_OK,
                 NULL);
    expect_parse("scalar", "{\"s\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[0,8]}}", 0, 8, GMLP_OK, NULL);
    expect_parse("zero-size", "{\"z\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[0,0]},"
                 "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 0, 1, GMLP_OK, NULL);
    expect_parse("extra key", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 0, 4,
                 GMLP_ERR_FORMAT, "'a'");
    expect_parse("too many dims", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,1]}}",
                 0, 1, GMLP_ERR_FORMAT, "dimensions");
    /* absurd nesting is refused before the JSON parser recurses */
    size_t deep = 200000;
    char *nest = malloc(deep + 2);
    nest[0] = '{';
    memset(nest + 1, '[', deep);
    nest[deep + 1] = 0;
    expect_parse("deep nesting", nest, 0, 0, GMLP_ERR_FORMAT, "nest");
    free(nest);
    gmlp_st_file f;
    gmlp_error err = {.msg = ""};
    CHECK(gmlp_st_parse(NULL, 0, &f, &err) == GMLP_ERR_FORMAT, "NULL buffer");
}

static void test_fixtures(const char *dir)
{
    static const char *const names[] = {"gmlp_rgb", "gmlp_gray_f16", "gmlp_nonsquare_bf16", "gmlp_headless",
                                        "mixer_rgb", "mixer_gray_batch5", "gmlp_s16_tiny_like"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[1024];
        gmlp_error err = {.msg = ""};
        snprintf(path, sizeof path, "%s/e2e/%s.safetensors", dir, names[i]);
        size_t size;
        unsigned char *buf = check_read_file(path, &size);
        CHECK(buf && validate(buf, size, &err) == GMLP_OK, "%s: %s", names[i], err.msg);
        /* every strict prefix of a valid file is refused, none crashes */
        int refused = 0, tried = 0;
        for (size_t cut = 0; buf && cut < size; cut += 1 + size / 97, tried++)
            refused += validate(buf, cut, &err) != GMLP_OK;
        CHECK(refused == tried, "%s: %d of %d truncations accepted", names[i], tried - refused, tried);
        free(buf);
    }
}

static void test_corpus(const char *dir)
{
    char path[1024], line[1024], file[512], status[64], fragment[256];
    snprintf(path, sizeof path, "%s/broken/manifest.txt", dir);
    FILE *m = fopen(path, "r");
    CHECK(m != NULL, "cannot open %s", path);
    int cases = 0;
    while (m && fgets(line, sizeof line, m)) {
        if (sscanf(line, "%511[^\t]\t%63[^\t]\t%255[^\t\n]", file, status, fragment) != 3 || !strcmp(status, "IO"))
            continue;
        snprintf(path, sizeof path, "%s/broken/%s", dir, file);
        size_t size;
        unsigned char *buf = check_read_file(path, &size);
        gmlp_error err = {.msg = ""};
        gmlp_status want = !strcmp(status, "FORMAT") ? GMLP_ERR_FORMAT : GMLP_ERR_UNSUPPORTED;
        gmlp_status st = buf ? validate(buf, size, &err) : GMLP_ERR_IO;
        CHECK(st == want, "%s: expected %s, got %s: %s", file, status, gmlp_status_string(st), err.msg);
        CHECK(strcasestr(err.msg, fragment) != NULL, "%s: message lacks '%s': %s", file, fragment, err.msg);
        free(buf);
        cases++;
    }
    if (m)
        fclose(m);
    CHECK(cases >= 40, "only %d corpus cases", cases);
}

/* Inputs that once crashed a fuzzer must now be handled, whatever the verdict. */
static void test_fuzz_regressions(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/fuzz-regressions", dir);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.' || strstr(e->d_name, ".md"))
            continue;
        snprintf(path, sizeof path, "%s/fuzz-regressions/%s", dir, e->d_name);
        size_t size;
        unsigned char *buf = check_read_file(path, &size);
        gmlp_error err = {.msg = ""};
        gmlp_status st = buf ? validate(buf, size, &err) : GMLP_ERR_IO;
        CHECK(st != GMLP_ERR_IO, "%s unreadable", path);
        free(buf);
    }
    if (d)
        closedir(d);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_safetensors DATA_DIR\n");
        return 2;
    }
    test_half();
    test_edge_cases();
    test_fixtures(argv[1]);
    test_corpus(argv[1]);
    test_fuzz_regressions(argv[1]);
    return check_summary("test_safetensors");
}
