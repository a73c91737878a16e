/* The safetensors parser alone (no OpenCL, no model code, so it runs under
 * valgrind and the sanitizers): files built in memory, valid ones of every
 * kind and a hostile corpus that must be refused with a useful message.
 * Buffers are allocated to their exact size, so any read past the end shows
 * up under ASan or valgrind.
 * The files of tests/data go through test_safetensors (parser and config). */
#include <ctype.h>
#include <dirent.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "format/safetensors.h"

static int contains_nocase(const char *hay, const char *needle)
{
    for (size_t n = strlen(needle); *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return !*needle;
}

typedef struct blob {
    uint8_t *buf;
    size_t size;
} blob;

/* Exactly 8 + hlen + dlen bytes: the length field as given, the header bytes,
 * then the data. */
static blob build_raw(uint64_t len_field, const void *header, size_t hlen, const void *data, size_t dlen)
{
    blob b = {malloc(8 + hlen + dlen), 8 + hlen + dlen};
    if (!b.buf) {
        printf("FAIL: out of memory building a test file\n");
        exit(1);
    }
    for (int i = 0; i < 8; i++)
        b.buf[i] = (uint8_t)(len_field >> (8 * i));
    if (hlen)
        memcpy(b.buf + 8, header, hlen);
    if (dlen)
        memcpy(b.buf + 8 + hlen, data, dlen);
    return b;
}

/* A well-formed file: header padded with spaces to hlen bytes (0: no padding). */
static blob build(const char *header, size_t hlen, const void *data, size_t dlen)
{
    size_t n = strlen(header);
    if (hlen < n)
        hlen = n;
    char *h = malloc(hlen ? hlen : 1);
    memset(h, ' ', hlen);
    memcpy(h, header, n);
    blob b = build_raw(hlen, h, hlen, data, dlen);
    free(h);
    return b;
}

/* One tensor entry; numbers are pasted as written, so negatives work too. */
#define T(dt, shape, b, e) "{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"

static int is_zeroed(const gmlp_st_file *f)
{
    return !f->tensors && !f->n_tensors && !f->meta_keys && !f->meta_values && !f->n_meta;
}

/* Parses b (then frees it); must fail with GMLP_ERR_FORMAT, a message
 * containing fragment, and *out zeroed. */
static void expect_fail_blob(const char *name, blob b, const char *fragment)
{
    gmlp_st_file f;
    memset(&f, 0xa5, sizeof f); /* stale garbage the parser must clear */
    gmlp_error err = {.msg = ""};
    gmlp_status st = gmlp_st_parse(b.buf, b.size, &f, &err);
    CHECK(st == GMLP_ERR_FORMAT && contains_nocase(err.msg, fragment) && is_zeroed(&f),
          "refuses %s (%s): status %d (want %d), message lacks '%s' or *out not zeroed", name, err.msg, (int)st,
          (int)GMLP_ERR_FORMAT, fragment);
    if (st == GMLP_OK)
        gmlp_st_free(&f);
    free(b.buf);
}

/* header padded to hlen, followed by dlen zero bytes of data */
static void expect_fail(const char *name, const char *header, size_t dlen, const char *fragment)
{
    uint8_t *zeros = calloc(dlen ? dlen : 1, 1);
    expect_fail_blob(name, build(header, 0, zeros, dlen), fragment);
    free(zeros);
}

static int parse_ok(const char *name, blob b, gmlp_st_file *f)
{
    gmlp_error err = {.msg = ""};
    gmlp_status st = gmlp_st_parse(b.buf, b.size, f, &err);
    char label[256];
    snprintf(label, sizeof label, "%s parses", name);
    CHECK(st == GMLP_OK, "%s: status %d: %s", label, (int)st, err.msg);
    return st == GMLP_OK;
}

static int same_bits(const float *a, const float *b, size_t n)
{
    return !memcmp(a, b, n * sizeof *a);
}

/* F32 data at an odd address, with values that must survive bit-exactly. */
static void test_f32(void)
{
    const float vals[] = {1.5f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, FLT_MAX, -FLT_MIN};
    const char *h = "{\"w\":" T("F32", "[2,4]", 0, 32) "}";
    size_t hlen = strlen(h) | 1; /* 8 + odd: the data is misaligned for float */
    blob b = build(h, hlen, vals, sizeof vals);
    gmlp_st_file f;
    if (parse_ok("F32 file", b, &f)) {
        const gmlp_st_tensor *t = gmlp_st_find(&f, "w");
        float got[8];
        CHECK(t && t->dtype == GMLP_DT_F32 && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 4 && t->numel == 8 &&
                  t->nbytes == 32 && t->data == b.buf + 8 + hlen,
              "%s: wrong dtype/shape/numel/nbytes/data", "F32 tensor fields");
        CHECK(t && ((uintptr_t)t->data & 3) != 0, "%s: aligned by chance", "F32 data is misaligned (as intended)");
        CHECK(t && gmlp_st_to_f32(t, got) == 0 && same_bits(got, vals, 8),
              "%s: values differ", "F32 round-trips bit-exactly");
        gmlp_st_free(&f);
    }
    free(b.buf);
}

static void test_f16(void)
{
    /* every half value against its exact meaning */
    int bad = 0;
    for (unsigned h = 0; h < 65536; h++) {
        uint8_t bytes[2] = {(uint8_t)h, (uint8_t)(h >> 8)};
        gmlp_st_tensor t = {.dtype = GMLP_DT_F16, .numel = 1, .data = bytes, .nbytes = 2};
        float got;
        gmlp_st_to_f32(&t, &got);
        int e = (h >> 10) & 31, m = h & 1023;
        double want = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
        if (h & 0x8000)
            want = -want;
        bad += isnan(want) ? !isnan(got) : (double)got != want || !signbit(got) != !signbit(want);
    }
    CHECK(bad == 0, "%s: %d wrong", "all 65536 F16 values convert exactly", bad);

    /* and through a file: zeros, subnormals, normals, max, inf, nan */
    const uint16_t halves[] = {0x0000, 0x8000, 0x0001, 0x03ff, 0x8001, 0x0400, 0x3c00, 0xc000,
                               0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x3555, 0x0200};
    const float want[] = {0.0f, -0.0f, 0x1p-24f, 0x3ffp-24f, -0x1p-24f, 0x1p-14f, 1.0f, -2.0f,
                          65504.0f, INFINITY, -INFINITY, NAN, 0x1.554p-2f, 0x1p-15f};
    enum { N = sizeof halves / sizeof *halves };
    uint8_t data[2 * N];
    for (int i = 0; i < N; i++) {
        data[2 * i] = (uint8_t)halves[i];
        data[2 * i + 1] = (uint8_t)(halves[i] >> 8);
    }
    blob b = build("{\"h\":" T("F16", "[14]", 0, 28) "}", 0, data, sizeof data);
    gmlp_st_file f;
    if (parse_ok("F16 file", b, &f)) {
        float got[N];
        int ok = gmlp_st_to_f32(&f.tensors[0], got) == 0;
        for (int i = 0; i < N; i++)
            ok &= isnan(want[i]) ? isnan(got[i]) : got[i] == want[i] && !signbit(got[i]) == !signbit(want[i]);
        CHECK(ok, "%s: a value differs", "F16 subnormal/inf/nan values from a file");
        gmlp_st_free(&f);
    }
    free(b.buf);
}

static void test_bf16(void)
{
    const uint8_t data[] = {0x80, 0x3f, 0x49, 0xc0, 0x80, 0x7f, 0x80, 0xff, 0x01, 0x00, 0xc0, 0x7f, 0x00, 0x80};
    const float want[] = {1.0f, -3.140625f, INFINITY, -INFINITY, 0x1p-133f, NAN, -0.0f};
    blob b = build("{\"b\":" T("BF16", "[7]", 0, 14) "}", 0, data, sizeof data);
    gmlp_st_file f;
    if (parse_ok("BF16 file", b, &f)) {
        float got[7];
        int ok = gmlp_st_to_f32(&f.tensors[0], got) == 0;
        for (int i = 0; i < 7; i++)
            ok &= isnan(want[i]) ? isnan(got[i]) : got[i] == want[i] && !signbit(got[i]) == !signbit(want[i]);
        CHECK(ok, "%s: a value differs", "BF16 values (incl. subnormal, inf, nan, -0)");
        gmlp_st_free(&f);
    }
    free(b.buf);
}

/* Header order differs from offset order; metadata sits between tensors. */
static void test_multi_and_metadata(void)
{
    const char *h = "{\"b\":" T("F32", "[1]", 8, 12) ",\"__metadata__\":{\"format\":\"pt\",\"gmlp.arch\":\"gmlp\","
                    "\"uni\":\"caf\xc3\xa9 \\u2713\",\"esc\":\"a\\\"b\\\\c\\nd\",\"\":\"\"},"
                    "\"a\":" T("F16", "[2,2]", 0, 8) ",\"c\":" T("U8", "[]", 12, 13) "}";
    uint8_t data[13];
    for (int i = 0; i < 13; i++)
        data[i] = (uint8_t)i;
    blob b = build(h, 0, data, sizeof data);
    gmlp_st_file f;
    if (parse_ok("multi-tensor file", b, &f)) {
        const uint8_t *d = b.buf + b.size - sizeof data;
        CHECK(f.n_tensors == 3 && !strcmp(f.tensors[0].name, "a") && !strcmp(f.tensors[1].name, "b") &&
                  !strcmp(f.tensors[2].name, "c"), "%s: wrong order", "tensors sorted by data offset");
        CHECK(f.n_tensors == 3 && f.tensors[0].data == d && f.tensors[1].data == d + 8 && f.tensors[2].data == d + 12 &&
                  f.tensors[0].nbytes == 8 && f.tensors[1].nbytes == 4 && f.tensors[2].nbytes == 1,
              "%s: wrong", "data pointers and sizes");
        const gmlp_st_tensor *a = gmlp_st_find(&f, "a");
        CHECK(a && a->dtype == GMLP_DT_F16 && a->ndim == 2 && a->numel == 4 && gmlp_st_find(&f, "c") == &f.tensors[2] &&
                  !gmlp_st_find(&f, "d") && !gmlp_st_find(&f, "__metadata__"), "%s: wrong result", "gmlp_st_find");
        CHECK(f.n_meta == 5 && !strcmp(f.meta_keys[0], "format") && !strcmp(f.meta_keys[1], "gmlp.arch") &&
                  !strcmp(f.meta_keys[2], "uni") && !strcmp(f.meta_keys[3], "esc") && !strcmp(f.meta_keys[4], ""),
              "%s: n_meta %zu", "metadata keys in file order", f.n_meta);
        const char *uni = gmlp_st_meta(&f, "uni"), *esc = gmlp_st_meta(&f, "esc"), *empty = gmlp_st_meta(&f, "");
        CHECK(uni && !strcmp(uni, "caf\xc3\xa9 \xe2\x9c\x93") && esc && !strcmp(esc, "a\"b\\c\nd") && empty &&
                  !*empty && !strcmp(gmlp_st_meta(&f, "gmlp.arch"), "gmlp") && !gmlp_st_meta(&f, "missing"),
              "%s: wrong value", "metadata values (UTF-8, escapes, empty)");
        gmlp_st_free(&f);
        CHECK(is_zeroed(&f), "%s: not zeroed", "gmlp_st_free zeroes the struct");
    }
    free(b.buf);

    blob m = build("{\"__metadata__\":{\"k\":\"v\"}}", 0, NULL, 0);
    if (parse_ok("metadata-only file", m, &f)) {
        CHECK(f.n_tensors == 0 && f.n_meta == 1 && !strcmp(gmlp_st_meta(&f, "k"), "v"),
              "%s: wrong", "metadata-only contents");
        gmlp_st_free(&f);
    }
    free(m.buf);
}

static void test_scalar_and_empty(void)
{
    double pi = 3.14159265358979;
    blob b = build("{\"s\":" T("F64", "[]", 0, 8) "}", 0, &pi, sizeof pi);
    gmlp_st_file f;
    if (parse_ok("scalar F64", b, &f)) {
        double got;
        memcpy(&got, f.tensors[0].data, sizeof got);
        CHECK(f.n_tensors == 1 && f.tensors[0].ndim == 0 && f.tensors[0].numel == 1 && f.tensors[0].nbytes == 8 &&
                  got == pi, "%s: ndim %d numel %zu", "scalar: ndim 0, numel 1", f.tensors[0].ndim, f.tensors[0].numel);
        gmlp_st_free(&f);
    }
    free(b.buf);

    float one = 1.0f;
    b = build("{\"s\":" T("F32", "[]", 0, 4) "}", 0, &one, sizeof one);
    if (parse_ok("scalar F32", b, &f)) {
        float got = 0;
        CHECK(gmlp_st_to_f32(&f.tensors[0], &got) == 0 && got == 1.0f, "%s: got %g", "scalar F32 converts", got);
        gmlp_st_free(&f);
    }
    free(b.buf);

    /* zero-size tensors at the start, between, at the end, and with huge
     * other dimensions (the product is 0, whatever the order) */
    const uint8_t data[3] = {7, 8, 9};
    b = build("{\"z0\":" T("F32", "[0,3]", 0, 0) ",\"a\":" T("U8", "[2]", 0, 2) ",\"z1\":" T("F32", "[0]", 2, 2)
              ",\"b\":" T("U8", "[1]", 2, 3) ",\"z2\":" T("BF16", "[5,0]", 3, 3)
              ",\"zh\":" T("F32", "[4294967296,4294967296,4294967296,0]", 2, 2)
              ",\"zl\":" T("F32", "[0,4294967296,4294967296,4294967296]", 3, 3) "}",
              0, data, sizeof data);
    if (parse_ok("zero-size tensors", b, &f)) {
        static const char *const order[] = {"z0", "a", "z1", "zh", "b", "z2", "zl"};
        int ok = f.n_tensors == 7;
        for (size_t i = 0; ok && i < 7; i++)
            ok = !strcmp(f.tensors[i].name, order[i]);
        CHECK(ok, "%s: wrong order", "zero-size tensors sorted by offset, then size, then name");
        const gmlp_st_tensor *z = gmlp_st_find(&f, "z0"), *zh = gmlp_st_find(&f, "zh");
        float dummy = 42;
        CHECK(z && z->numel == 0 && z->nbytes == 0 && z->ndim == 2 && zh && zh->numel == 0 &&
                  zh->shape[0] == 4294967296LL && gmlp_st_to_f32(z, &dummy) == 0 && dummy == 42,
              "%s: wrong", "zero-size tensor fields");
        gmlp_st_free(&f);
    }
    free(b.buf);

    b = build("{}", 0, NULL, 0);
    if (parse_ok("minimal header '{}'", b, &f)) {
        CHECK(f.n_tensors == 0 && f.n_meta == 0, "%s: n_tensors %zu", "empty header has no tensors", f.n_tensors);
        gmlp_st_free(&f);
    }
    free(b.buf);
}

static void test_padding(void)
{
    const float v[2] = {1, 2};
    const char *h = "{\"a\":" T("F32", "[2]", 0, 8) "}";
    size_t lens[] = {(strlen(h) + 7) / 8 * 8, strlen(h) + 1, 4096};
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "header padded to %zu bytes", lens[i]);
        blob b = build(h, lens[i], v, sizeof v);
        gmlp_st_file f;
        if (parse_ok(name, b, &f)) {
            float got[2];
            CHECK(f.n_tensors == 1 && gmlp_st_to_f32(&f.tensors[0], got) == 0 && got[0] == 1 && got[1] == 2,
                  "%s: wrong data", "padded header: data found after the padding");
            gmlp_st_free(&f);
        }
        free(b.buf);
    }
    /* JSON whitespace inside the header is fine too */
    blob b = build("{ \"a\" :\n\t{\"dtype\": \"F32\", \"shape\": [ 2 ], \"data_offsets\": [0, 8]}\r\n}", 0, v,
                   sizeof v);
    gmlp_st_file f;
    if (parse_ok("header with inner whitespace", b, &f))
        gmlp_st_free(&f);
    free(b.buf);
}

static void test_dtypes(void)
{
    static const struct {
        gmlp_dtype dt;
        const char *name;
        size_t size;
    } all[] = {
        {GMLP_DT_BOOL, "BOOL", 1}, {GMLP_DT_U8, "U8", 1},   {GMLP_DT_I8, "I8", 1},     {GMLP_DT_F8_E5M2, "F8_E5M2", 1},
        {GMLP_DT_F8_E4M3, "F8_E4M3", 1}, {GMLP_DT_I16, "I16", 2}, {GMLP_DT_U16, "U16", 2}, {GMLP_DT_F16, "F16", 2},
        {GMLP_DT_BF16, "BF16", 2}, {GMLP_DT_I32, "I32", 4}, {GMLP_DT_U32, "U32", 4}, {GMLP_DT_F32, "F32", 4},
        {GMLP_DT_F64, "F64", 8},   {GMLP_DT_I64, "I64", 8}, {GMLP_DT_U64, "U64", 8},
    };
    char header[2048] = "{";
    size_t off = 0;
    int names_ok = 1;
    for (size_t i = 0; i < 15; i++) {
        names_ok &= !strcmp(gmlp_dtype_name(all[i].dt), all[i].name) && gmlp_dtype_size(all[i].dt) == all[i].size;
        size_t n = strlen(header);
        snprintf(header + n, sizeof header - n,
                 "%s\"t%02zu\":{\"dtype\":\"%s\",\"shape\":[3],\"data_offsets\":[%zu,%zu]}", i ? "," : "", i,
                 all[i].name, off, off + 3 * all[i].size);
        off += 3 * all[i].size;
    }
    strcat(header, "}");
    CHECK(names_ok && !strcmp(gmlp_dtype_name((gmlp_dtype)99), "?") && gmlp_dtype_size((gmlp_dtype)99) == 0,
          "%s: wrong", "gmlp_dtype_name / gmlp_dtype_size");
    uint8_t *data = calloc(off, 1);
    blob b = build(header, 0, data, off);
    gmlp_st_file f;
    if (parse_ok("file with all 15 dtypes", b, &f)) {
        int ok = f.n_tensors == 15, conv = 1;
        for (size_t i = 0; ok && i < 15; i++) {
            const gmlp_st_tensor *t = &f.tensors[i];
            float tmp[3];
            ok = t->dtype == all[i].dt && t->nbytes == 3 * all[i].size && t->numel == 3;
            int is_float = t->dtype == GMLP_DT_F32 || t->dtype == GMLP_DT_F16 || t->dtype == GMLP_DT_BF16;
            conv &= gmlp_st_to_f32(t, tmp) == (is_float ? 0 : -1);
        }
        CHECK(ok, "%s: wrong", "every dtype parsed with the right size");
        CHECK(conv, "%s: wrong return", "gmlp_st_to_f32: 0 for F32/F16/BF16, -1 otherwise");
        gmlp_st_free(&f);
    }
    free(b.buf);
    free(data);

    uint8_t one = 0;
    b = build("{\"a\":" T("U8", "[1,1,1,1,1,1,1,1]", 0, 1) "}", 0, &one, 1);
    if (parse_ok("8-dimensional tensor", b, &f))
        gmlp_st_free(&f);
    free(b.buf);
}

/* Every strict prefix of a valid file is refused, none read past its end. */
static void test_prefixes(void)
{
    const float v[3] = {1, 2, 3};
    blob full = build("{\"__metadata__\":{\"k\":\"v\"},\"a\":" T("F32", "[2]", 0, 8) ",\"b\":" T("F32", "[1]", 8, 12)
                      "}",
                      0, v, sizeof v);
    int accepted = 0, zeroed = 1;
    for (size_t cut = 0; cut < full.size; cut++) {
        uint8_t *p = malloc(cut ? cut : 1);
        memcpy(p, full.buf, cut);
        gmlp_st_file f;
        gmlp_error err = {.msg = ""};
        if (gmlp_st_parse(p, cut, &f, &err) == GMLP_OK) {
            accepted++;
            gmlp_st_free(&f);
        }
        zeroed &= is_zeroed(&f);
        free(p);
    }
    CHECK(accepted == 0 && zeroed, "%s: %d accepted", "every strict prefix of a valid file is refused", accepted);
    free(full.buf);
}

/* Random byte changes: whatever the verdict, no crash, and an accepted file
 * still has every tensor inside the buffer, tiling the data section. */
static void test_mutations(void)
{
    const float v[3] = {1, 2, 3};
    blob base = build("{\"__metadata__\":{\"k\":\"v\"},\"a\":" T("F32", "[2]", 0, 8) ",\"b\":" T("BF16", "[2]", 8, 12)
                      "}",
                      0, v, sizeof v);
    unsigned state = 12345;
    int bad = 0, accepted = 0;
    for (int iter = 0; iter < 3000; iter++) {
        uint8_t *p = malloc(base.size);
        memcpy(p, base.buf, base.size);
        int nmut = 1 + iter % 4;
        for (int k = 0; k < nmut; k++) {
            state = state * 1664525u + 1013904223u;
            size_t at = (state >> 8) % base.size;
            state = state * 1664525u + 1013904223u;
            p[at] = (uint8_t)(state >> 24);
        }
        gmlp_st_file f;
        gmlp_error err = {.msg = ""};
        if (gmlp_st_parse(p, base.size, &f, &err) == GMLP_OK) {
            accepted++;
            const uint8_t *data_end = p + base.size, *pos = NULL;
            for (size_t i = 0; i < f.n_tensors; i++) {
                const gmlp_st_tensor *t = &f.tensors[i];
                if (!pos)
                    pos = t->data;
                bad += t->data != pos || t->data < p + 8 || t->nbytes > (size_t)(data_end - t->data) ||
                       t->nbytes != t->numel * gmlp_dtype_size(t->dtype);
                pos = t->data + t->nbytes;
            }
            bad += pos && pos != data_end;
            gmlp_st_free(&f);
        }
        free(p);
    }
    char label[128];
    snprintf(label, sizeof label, "3000 mutated files: no crash, accepted ones (%d) consistent", accepted);
    CHECK(bad == 0, "%s: %d inconsistencies", label, bad);
    free(base.buf);
}

static void test_err_buffer(void)
{
    uint8_t tiny[4] = {0};
    gmlp_st_file f;
    gmlp_error err = {.msg = ""};
    CHECK(gmlp_st_parse(tiny, sizeof tiny, &f, NULL) == GMLP_ERR_FORMAT, "%s: wrong status", "NULL error");
    /* a message longer than the error's buffer (a 5000-character tensor name) is cut, still a string */
    char *name = malloc(5001), *header = malloc(6000);
    memset(name, 'a', 5000);
    name[5000] = 0;
    snprintf(header, 6000, "{\"%s\": {\"dtype\": \"Q7\", \"shape\": [], \"data_offsets\": [0, 0]}}", name);
    free(name);
    blob b = build(header, 0, tiny, 0);
    gmlp_status st = gmlp_st_parse(b.buf, b.size, &f, &err);
    CHECK(st == GMLP_ERR_FORMAT && strlen(err.msg) == sizeof err.msg - 1,
          "%s: status %d, length %zu", "message truncated to the buffer", (int)st, strlen(err.msg));
    free(header);
    free(b.buf);
    CHECK(gmlp_st_parse(NULL, 0, &f, &err) == GMLP_ERR_FORMAT && is_zeroed(&f), "%s: wrong status", "NULL buffer");
    gmlp_st_free(NULL); /* a no-op, as free(NULL) */
}

static void test_hostile(void)
{
    /* the length prefix */
    expect_fail_blob("empty buffer", (blob){malloc(1), 0}, "truncated");
    expect_fail_blob("7-byte buffer", (blob){calloc(1, 7), 7}, "too short");
    expect_fail_blob("8 bytes, length 0", build_raw(0, NULL, 0, NULL, 0), "header length 0");
    expect_fail_blob("header length 1", build_raw(1, "{", 1, NULL, 0), "header length 1");
    expect_fail_blob("header length past the end", build_raw(100, "{}", 2, NULL, 0), "exceeds");
    expect_fail_blob("header length 2^63", build_raw(UINT64_C(1) << 63, "{}", 2, NULL, 0), "header length");
    expect_fail_blob("header length 2^64-1", build_raw(UINT64_MAX, "{}", 2, NULL, 0), "header length");
    expect_fail_blob("header length 2^64-8 (wraps if added to 8)", build_raw(UINT64_MAX - 7, "{}", 2, NULL, 0),
                     "header length");
    {
        /* over the 100 MB cap but inside the buffer; the header bytes are
         * never read (left uninitialised so valgrind would notice) */
        size_t big = ((size_t)100 << 20) + 1;
        blob b = {malloc(8 + big), 8 + big};
        if (b.buf) {
            for (int i = 0; i < 8; i++)
                b.buf[i] = (uint8_t)((uint64_t)big >> (8 * i));
            expect_fail_blob("header over 100 MB", b, "not a safetensors file");
        }
    }

    /* the JSON text */
    expect_fail("leading space", " {}", 0, "not a safetensors file");
    expect_fail("non-JSON", "{this is not json}", 0, "not valid JSON");
    expect_fail("JSON array", "[1, 2]", 0, "not a safetensors file");
    expect_fail("JSON string", "\"{}\"", 0, "not a safetensors file");
    expect_fail("unterminated object", "{\"a\":", 0, "not valid JSON");
    expect_fail("trailing garbage after the object", "{} x", 0, "not valid JSON");
    expect_fail_blob("NUL padding", build_raw(4, "{}\0\0", 4, NULL, 0), "not valid JSON");
    expect_fail("invalid UTF-8 in a key", "{\"a\xff\":" T("U8", "[0]", 0, 0) "}", 0, "UTF-8");
    expect_fail("overlong UTF-8 in a key", "{\"\xc0\xaf\":" T("U8", "[0]", 0, 0) "}", 0, "UTF-8");
    expect_fail("UTF-8 surrogate in a value", "{\"__metadata__\":{\"k\":\"\xed\xa0\x80\"}}", 0, "UTF-8");
    expect_fail("truncated UTF-8 sequence", "{\"__metadata__\":{\"k\":\"\xe2\x9c\"}}", 0, "UTF-8");
    expect_fail("NUL escape in a key", "{\"a\\u0000b\":" T("U8", "[0]", 0, 0) "}", 0, "NUL");
    expect_fail("NUL escape in metadata", "{\"__metadata__\":{\"k\":\"a\\u0000\"}}", 0, "u0000");
    expect_fail("lone surrogate escape", "{\"__metadata__\":{\"k\":\"\\ud800\"}}", 0, "unicode");
    expect_fail("duplicate tensor names", "{\"a\":" T("U8", "[1]", 0, 1) ",\"a\":" T("U8", "[1]", 1, 2) "}", 2,
                "duplicate");
    expect_fail("duplicate metadata keys", "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0, "duplicate");
    expect_fail("duplicate __metadata__", "{\"__metadata__\":{},\"__metadata__\":{}}", 0, "duplicate");
    expect_fail("duplicate key in a tensor entry",
                "{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1, "duplicate");
    expect_fail("integer beyond 64 bits", "{\"a\":" T("U8", "[18446744073709551616]", 0, 1) "}", 1, "too big");

    /* nesting: jansson itself, then through the parser */
    {
        size_t deep = 100000;
        char *nest = malloc(deep + 8);
        memset(nest, '[', deep);
        json_error_t jerr;
        json_t *r = json_loadb(nest, deep, 0, &jerr);
        CHECK(r == NULL, "%s: accepted", "jansson refuses 100000 '[' without crashing");
        json_decref(r);
        memcpy(nest, "{\"a\":", 5);
        nest[deep] = '}';
        nest[deep + 1] = 0;
        expect_fail("100000 nested '[' inside the header", nest, 0, "nest");
        memset(nest, '{', deep);
        expect_fail("100000 nested '{'", nest, 0, "nest");
        free(nest);
    }
    {
        /* the limit exactly: 64 levels reach jansson (and fail later, as an
         * array is no tensor entry), 65 are refused up front */
        char h[256];
        for (int levels = 64; levels <= 65; levels++) {
            int n = 0;
            n += sprintf(h + n, "{\"a\":");
            for (int i = 1; i < levels; i++)
                h[n++] = '[';
            for (int i = 1; i < levels; i++)
                h[n++] = ']';
            strcpy(h + n, "}");
            expect_fail(levels == 64 ? "nesting 64 levels (the limit)" : "nesting 65 levels", h, 0,
                        levels == 64 ? "tensor 'a': entry is not" : "nests deeper than 64");
        }
    }
    {
        /* brackets inside strings, with escaped quotes, are not nesting */
        size_t n = 5000;
        char *h = malloc(n + 64);
        strcpy(h, "{\"__metadata__\":{\"k\":\"\\\"");
        size_t at = strlen(h);
        memset(h + at, '[', n);
        strcpy(h + at + n, "\\\\\"}}");
        blob b = build(h, 0, NULL, 0);
        gmlp_st_file f;
        if (parse_ok("5000 '[' inside a metadata string", b, &f)) {
            const char *v = gmlp_st_meta(&f, "k");
            CHECK(v && strlen(v) == n + 2 && v[0] == '"' && v[n + 1] == '\\', "%s: wrong", "bracket string read back");
            gmlp_st_free(&f);
        }
        free(b.buf);
        free(h);
    }

    /* tensor entries */
    expect_fail("tensor entry not an object", "{\"stem.proj.bias\":[1,2,3]}", 0,
                "tensor 'stem.proj.bias': entry is not");
    expect_fail("tensor entry a string", "{\"a\":\"F32\"}", 0, "'a': entry is not a JSON object");
    expect_fail("missing dtype", "{\"a\":{\"shape\":[1],\"data_offsets\":[0,1]}}", 1, "tensor 'a': missing dtype");
    expect_fail("missing shape", "{\"a\":{\"dtype\":\"U8\",\"data_offsets\":[0,1]}}", 1, "tensor 'a': missing shape");
    expect_fail("missing data_offsets", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1]}}", 1,
                "tensor 'a': missing data_offsets");
    expect_fail("empty tensor entry", "{\"a\":{}}", 0, "tensor 'a': missing dtype");
    expect_fail("unknown extra key", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":1}}", 1,
                "tensor 'a': unexpected key 'x'");
    expect_fail("dtype not a string", "{\"a\":{\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
                "tensor 'a': dtype is not a string");
    expect_fail("unknown dtype F17", "{\"a\":" T("F17", "[1]", 0, 4) "}", 4, "tensor 'a': unknown dtype 'F17'");
    expect_fail("lower-case dtype", "{\"a\":" T("f32", "[1]", 0, 4) "}", 4, "unknown dtype 'f32'");
    expect_fail("shape not an array", "{\"a\":" T("U8", "1", 0, 1) "}", 1, "tensor 'a': shape is not an array");
    expect_fail("negative shape", "{\"a\":" T("U8", "[2,-1]", 0, 1) "}", 1, "tensor 'a': shape entry 1 is not");
    expect_fail("fractional shape", "{\"a\":" T("U8", "[1.0]", 0, 1) "}", 1, "shape entry 0");
    expect_fail("string in shape", "{\"a\":" T("U8", "[\"1\"]", 0, 1) "}", 1, "shape entry 0");
    expect_fail("9 dimensions", "{\"a\":" T("U8", "[1,1,1,1,1,1,1,1,1]", 0, 1) "}", 1, "9 dimensions");
    expect_fail("shape overflow", "{\"norm.bias\":" T("F32", "[4294967296,4294967296,4294967296]", 0, 4) "}", 4,
                "tensor 'norm.bias': shape element count overflows");
    expect_fail("shape x dtype size overflow", "{\"a\":" T("F32", "[4611686018427387904]", 0, 4) "}", 4,
                "size overflows");
    expect_fail("shape x dtype size wraps to 0", "{\"a\":" T("F32", "[4611686018427387904]", 0, 0) "}", 0,
                "size overflows");

    /* data_offsets */
    expect_fail("data_offsets not an array", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":0}}", 1,
                "tensor 'a': data_offsets is not a [begin, end]");
    expect_fail("data_offsets with 3 entries",
                "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1,1]}}", 1, "[begin, end]");
    expect_fail("data_offsets with 1 entry", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1]}}", 1,
                "[begin, end]");
    expect_fail("negative offsets", "{\"a\":" T("U8", "[4]", -4, 0) "}", 4,
                "tensor 'a': data_offsets are not non-negative");
    expect_fail("fractional offsets", "{\"a\":" T("U8", "[4]", 0, 4.0) "}", 4, "non-negative integers");
    expect_fail("reversed offsets", "{\"blocks.0.norm.weight\":" T("U8", "[6]", 10, 4) "}", 10,
                "tensor 'blocks.0.norm.weight': data_offsets [10, 4] are reversed");
    expect_fail("offsets past the end", "{\"a\":" T("F32", "[4]", 0, 16) "}", 12,
                "tensor 'a': data_offsets end 16 is past");
    expect_fail("offsets near 2^63", "{\"a\":" T("U8", "[1]", 9223372036854775806, 9223372036854775807) "}", 1,
                "past the data section");
    expect_fail("length mismatch with shape x dtype", "{\"w\":" T("F32", "[3]", 0, 8) "}", 8,
                "tensor 'w': data_offsets [0, 8] span 8 bytes, but shape x dtype F32 needs 12");
    expect_fail("length mismatch from dtype (F16 sized as F32)", "{\"w\":" T("F16", "[2]", 0, 8) "}", 8,
                "needs 4");

    /* tiling of the data section */
    expect_fail("gap between tensors", "{\"a\":" T("U8", "[2]", 0, 2) ",\"b\":" T("U8", "[2]", 4, 6) "}", 6,
                "tensor 'b': data_offsets begin at 4, leaving a gap of 2 bytes after tensor 'a'");
    expect_fail("gap at the start", "{\"a\":" T("U8", "[2]", 2, 4) "}", 4, "gap of 2 bytes at the start");
    expect_fail("overlapping tensors", "{\"a\":" T("U8", "[4]", 0, 4) ",\"b\":" T("U8", "[4]", 2, 6) "}", 6,
                "tensor 'b': data_offsets [2, 6] overlap tensor 'a' [0, 4]");
    expect_fail("identical offsets", "{\"a\":" T("U8", "[4]", 0, 4) ",\"b\":" T("U8", "[4]", 0, 4) "}", 4, "overlap");
    expect_fail("zero-size tensor inside another",
                "{\"a\":" T("U8", "[4]", 0, 4) ",\"z\":" T("U8", "[0]", 2, 2) "}", 4, "tensor 'z'");
    expect_fail("trailing unused data", "{\"a\":" T("U8", "[2]", 0, 2) "}", 5,
                "3 trailing bytes in the data section after the last tensor 'a'");
    expect_fail("data but no tensors", "{}", 3, "trailing bytes");
    expect_fail("data but only metadata", "{\"__metadata__\":{}}", 1, "trailing bytes");

    /* __metadata__ */
    expect_fail("metadata value a number", "{\"__metadata__\":{\"epochs\":3}}", 0,
                "metadata key 'epochs' is not a string");
    expect_fail("metadata value null", "{\"__metadata__\":{\"k\":null}}", 0, "metadata key 'k' is not a string");
    expect_fail("metadata value an object", "{\"__metadata__\":{\"k\":{}}}", 0, "metadata key 'k'");
    expect_fail("metadata not an object", "{\"__metadata__\":[\"a\"]}", 0, "__metadata__ is not a JSON object");
    expect_fail("metadata a string", "{\"__metadata__\":\"x\"}", 0, "__metadata__ is not");
    expect_fail("error after metadata (nothing leaks)",
                "{\"__metadata__\":{\"a\":\"1\",\"b\":\"2\"},\"t\":" T("U8", "[1]", 0, 1)
                ",\"u\":" T("U8", "[1]", 0, 2) "}",
                2, "tensor 'u'");
}

/* ---- optional: the files under tests/data ---- */

int main(void)
{
    test_f32();
    test_f16();
    test_bf16();
    test_multi_and_metadata();
    test_scalar_and_empty();
    test_padding();
    test_dtypes();
    test_prefixes();
    test_mutations();
    test_err_buffer();
    test_hostile();
    return check_summary("test_safetensors_parser");
}
