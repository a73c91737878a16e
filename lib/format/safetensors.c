/* safetensors: 8-byte little-endian header length N, N bytes of JSON
 * (a UTF-8 object, optionally padded with spaces), then the data section,
 * which the tensors' data_offsets must tile exactly. */
#include "safetensors.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define MAX_HEADER (100u << 20) /* the reference implementation's limit */
#define MAX_DEPTH 64            /* a valid header nests 3 levels deep */

static const struct {
    const char *name;
    size_t size;
} dtypes[] = {
    [GMLP_DT_BOOL] = {"BOOL", 1}, [GMLP_DT_U8] = {"U8", 1},     [GMLP_DT_I8] = {"I8", 1},
    [GMLP_DT_F8_E5M2] = {"F8_E5M2", 1}, [GMLP_DT_F8_E4M3] = {"F8_E4M3", 1}, [GMLP_DT_I16] = {"I16", 2},
    [GMLP_DT_U16] = {"U16", 2},   [GMLP_DT_F16] = {"F16", 2},   [GMLP_DT_BF16] = {"BF16", 2},
    [GMLP_DT_I32] = {"I32", 4},   [GMLP_DT_U32] = {"U32", 4},   [GMLP_DT_F32] = {"F32", 4},
    [GMLP_DT_F64] = {"F64", 8},   [GMLP_DT_I64] = {"I64", 8},   [GMLP_DT_U64] = {"U64", 8},
};
#define N_DTYPES (sizeof dtypes / sizeof *dtypes)

const char *gmlp_dtype_name(gmlp_dtype dt)
{
    return (size_t)dt < N_DTYPES ? dtypes[dt].name : "?";
}

size_t gmlp_dtype_size(gmlp_dtype dt)
{
    return (size_t)dt < N_DTYPES ? dtypes[dt].size : 0;
}

static int dtype_from_name(const char *s, gmlp_dtype *out)
{
    for (size_t i = 0; i < N_DTYPES; i++)
        if (!strcmp(s, dtypes[i].name)) {
            *out = (gmlp_dtype)i;
            return 1;
        }
    return 0;
}

void gmlp_st_free(gmlp_st_file *f)
{
    for (size_t i = 0; f->tensors && i < f->n_tensors; i++)
        free(f->tensors[i].name);
    for (size_t i = 0; f->meta_keys && i < f->n_meta; i++) {
        free(f->meta_keys[i]);
        free(f->meta_values[i]);
    }
    free(f->tensors);
    free(f->meta_keys);
    free(f->meta_values);
    memset(f, 0, sizeof *f);
}

/* jansson recurses while parsing; refuse absurd nesting before it does. */
static int nesting_ok(const uint8_t *p, size_t n)
{
    int depth = 0, in_str = 0;
    for (size_t i = 0; i < n; i++) {
        if (in_str) {
            if (p[i] == '\\')
                i++;
            else if (p[i] == '"')
                in_str = 0;
        } else if (p[i] == '"') {
            in_str = 1;
        } else if (p[i] == '{' || p[i] == '[') {
            if (++depth > MAX_DEPTH)
                return 0;
        } else if (p[i] == '}' || p[i] == ']') {
            depth--;
        }
    }
    return 1;
}

static gmlp_status parse_metadata(json_t *meta, gmlp_st_file *f, char *err, size_t errsize)
{
    if (!json_is_object(meta))
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "__metadata__ is not a JSON object");
    size_t n = json_object_size(meta);
    f->meta_keys = calloc(n ? n : 1, sizeof *f->meta_keys);
    f->meta_values = calloc(n ? n : 1, sizeof *f->meta_values);
    if (!f->meta_keys || !f->meta_values)
        return gmlp_errf(err, errsize, GMLP_ERR_HOST_MEMORY, "out of host memory reading __metadata__");
    const char *key;
    json_t *val;
    json_object_foreach(meta, key, val) {
        if (!json_is_string(val))
            return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "__metadata__ key '%s' is not a string", key);
        f->meta_keys[f->n_meta] = strdup(key);
        f->meta_values[f->n_meta] = strdup(json_string_value(val));
        f->n_meta++;
        if (!f->meta_keys[f->n_meta - 1] || !f->meta_values[f->n_meta - 1])
            return gmlp_errf(err, errsize, GMLP_ERR_HOST_MEMORY, "out of host memory reading __metadata__");
    }
    return GMLP_OK;
}

/* A JSON integer in [0, limit]. */
static int get_uint(json_t *v, uint64_t limit, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > limit)
        return 0;
    *out = (uint64_t)json_integer_value(v);
    return 1;
}

static gmlp_status parse_tensor(const char *name, json_t *entry, size_t data_size, gmlp_st_tensor *t, char *err,
                                size_t errsize)
{
    if (!json_is_object(entry))
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "tensor '%s': entry is not a JSON object", name);
    json_t *dtype = json_object_get(entry, "dtype"), *shape = json_object_get(entry, "shape"),
           *offsets = json_object_get(entry, "data_offsets");
    if (!json_is_string(dtype))
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "tensor '%s': missing or non-string dtype", name);
    if (!json_is_array(shape))
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "tensor '%s': missing or non-array shape", name);
    if (!json_is_array(offsets) || json_array_size(offsets) != 2)
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "tensor '%s': data_offsets is not a [begin, end] pair", name);
    if (json_object_size(entry) != 3)
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT,
                         "tensor '%s': entry has keys other than dtype, shape and data_offsets", name);
    if (!dtype_from_name(json_string_value(dtype), &t->dtype))
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "tensor '%s': unknown dtype '%s'", name,
                         json_string_value(dtype));
    size_t ndim = json_array_size(shape);
    if (ndim > GMLP_ST_MAX_DIMS)
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "tensor '%s': shape has %zu dimensions (at most %d)", name,
                         ndim, GMLP_ST_MAX_DIMS);
    t->ndim = (int)ndim;
    size_t numel = 1;
    int overflow = 0;
    for (size_t i = 0; i < ndim; i++) {
        uint64_t d;
        if (!get_uint(json_array_get(shape, i), INT64_MAX, &d))
            return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "tensor '%s': shape entry %zu is not a non-negative integer",
                             name, i);
        t->shape[i] = (int64_t)d;
        if (d && numel > SIZE_MAX / d)
            overflow = 1;
        else
            numel *= (size_t)d;
    }
    size_t esize = dtypes[t->dtype].size;
    if (overflow || numel > SIZE_MAX / esize)
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "tensor '%s': shape size overflows", name);
    t->numel = numel;
    uint64_t begin, end;
    if (!get_uint(json_array_get(offsets, 0), UINT64_MAX >> 1, &begin) ||
        !get_uint(json_array_get(offsets, 1), UINT64_MAX >> 1, &end))
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "tensor '%s': data_offsets are not non-negative integers", name);
    if (begin > end)
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "tensor '%s': data_offsets [%llu, %llu] are reversed", name,
                         (unsigned long long)begin, (unsigned long long)end);
    if (end > data_size)
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT,
                         "tensor '%s': data_offsets end %llu is past the data section (%zu bytes; truncated file?)",
                         name, (unsigned long long)end, data_size);
    if (end - begin != numel * esize)
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT,
                         "tensor '%s': data_offsets span %llu bytes, but shape x dtype %s needs %zu", name,
                         (unsigned long long)(end - begin), dtypes[t->dtype].name, numel * esize);
    t->data = (const uint8_t *)(uintptr_t)begin; /* made absolute once the data section is known */
    t->nbytes = (size_t)(end - begin);
    if (!(t->name = strdup(name)))
        return gmlp_errf(err, errsize, GMLP_ERR_HOST_MEMORY, "out of host memory");
    return GMLP_OK;
}

static int by_offset(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const gmlp_st_tensor *)a)->data, y = (uintptr_t)((const gmlp_st_tensor *)b)->data;
    if (x != y)
        return x < y ? -1 : 1;
    /* zero-length tensors share offsets with their neighbours; keep the order stable */
    size_t nx = ((const gmlp_st_tensor *)a)->nbytes, ny = ((const gmlp_st_tensor *)b)->nbytes;
    return nx < ny ? -1 : nx > ny;
}

/* Sorted by begin, tensors must cover [0, data_size) with no gap or overlap. */
static gmlp_status check_tiling(gmlp_st_file *f, size_t data_size, char *err, size_t errsize)
{
    qsort(f->tensors, f->n_tensors, sizeof *f->tensors, by_offset);
    size_t pos = 0;
    for (size_t i = 0; i < f->n_tensors; i++) {
        const gmlp_st_tensor *t = &f->tensors[i];
        size_t begin = (uintptr_t)t->data;
        if (begin > pos)
            return gmlp_errf(err, errsize, GMLP_ERR_FORMAT,
                             "tensor '%s': data_offsets leave a gap of %zu bytes before it", t->name, begin - pos);
        if (begin < pos)
            return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "tensor '%s': data_offsets overlap the previous tensor '%s'",
                             t->name, f->tensors[i - 1].name);
        pos = begin + t->nbytes;
    }
    if (pos != data_size)
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT,
                         "%zu trailing bytes after the last tensor's data_offsets (data section %zu bytes)",
                         data_size - pos, data_size);
    return GMLP_OK;
}

static gmlp_status parse_header(json_t *root, const uint8_t *data, size_t data_size, gmlp_st_file *f, char *err,
                                size_t errsize)
{
    if (!json_is_object(root))
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "header JSON is not an object");
    size_t n = json_object_size(root);
    f->tensors = calloc(n ? n : 1, sizeof *f->tensors);
    if (!f->tensors)
        return gmlp_errf(err, errsize, GMLP_ERR_HOST_MEMORY, "out of host memory reading the header");
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val) {
        if (!strcmp(key, "__metadata__")) {
            GMLP_TRY(parse_metadata(val, f, err, errsize));
            continue;
        }
        gmlp_st_tensor *t = &f->tensors[f->n_tensors];
        gmlp_status st = parse_tensor(key, val, data_size, t, err, errsize);
        if (st != GMLP_OK) {
            free(t->name);
            t->name = NULL;
            return st;
        }
        f->n_tensors++;
    }
    GMLP_TRY(check_tiling(f, data_size, err, errsize));
    for (size_t i = 0; i < f->n_tensors; i++)
        f->tensors[i].data = data + (uintptr_t)f->tensors[i].data;
    return GMLP_OK;
}

gmlp_status gmlp_st_parse(const uint8_t *buf, size_t size, gmlp_st_file *out, char *err, size_t errsize)
{
    memset(out, 0, sizeof *out);
    if (!buf || size < 8)
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT,
                         "file is %zu bytes: too short for the 8-byte header length (truncated?)", buf ? size : 0);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | buf[i];
    if (hlen > size - 8)
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT,
                         "header length %llu exceeds the %zu bytes after it (truncated file?)", (unsigned long long)hlen,
                         size - 8);
    if (hlen < 2 || hlen > MAX_HEADER)
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "header length %llu is outside [2, %u]",
                         (unsigned long long)hlen, MAX_HEADER);
    const uint8_t *header = buf + 8;
    if (header[0] != '{')
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "header is not a JSON object (starts with byte 0x%02x)",
                         header[0]);
    if (!nesting_ok(header, (size_t)hlen))
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "header JSON nests deeper than %d levels", MAX_DEPTH);
    json_error_t jerr;
    /* trailing spaces are the format's padding; jansson skips whitespace */
    json_t *root = json_loadb((const char *)header, (size_t)hlen, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return gmlp_errf(err, errsize, GMLP_ERR_FORMAT, "header is not valid JSON (UTF-8): %s at byte %d", jerr.text,
                         jerr.position);
    gmlp_status st = parse_header(root, header + hlen, size - 8 - (size_t)hlen, out, err, errsize);
    json_decref(root);
    if (st != GMLP_OK)
        gmlp_st_free(out);
    return st;
}

const gmlp_st_tensor *gmlp_st_find(const gmlp_st_file *f, const char *name)
{
    for (size_t i = 0; i < f->n_tensors; i++)
        if (!strcmp(f->tensors[i].name, name))
            return &f->tensors[i];
    return NULL;
}

const char *gmlp_st_meta(const gmlp_st_file *f, const char *key)
{
    for (size_t i = 0; i < f->n_meta; i++)
        if (!strcmp(f->meta_keys[i], key))
            return f->meta_values[i];
    return NULL;
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | man << 13; /* inf, nan */
    } else if (exp) {
        bits = sign | (exp + 112) << 23 | man << 13;
    } else if (man) {
        /* subnormal: normalise the mantissa */
        int e = -1;
        do {
            e++;
            man <<= 1;
        } while (!(man & 0x400));
        bits = sign | (uint32_t)(112 - e) << 23 | (man & 0x3ff) << 13;
    } else {
        bits = sign;
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

int gmlp_st_to_f32(const gmlp_st_tensor *t, float *dst)
{
    const uint8_t *p = t->data;
    if (t->dtype == GMLP_DT_F32) {
        memcpy(dst, p, t->numel * 4);
        return 0;
    }
    if (t->dtype != GMLP_DT_F16 && t->dtype != GMLP_DT_BF16)
        return -1;
    for (size_t i = 0; i < t->numel; i++) {
        uint16_t v = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
        if (t->dtype == GMLP_DT_F16) {
            dst[i] = half_to_float(v);
        } else {
            uint32_t bits = (uint32_t)v << 16;
            memcpy(&dst[i], &bits, sizeof bits);
        }
    }
    return 0;
}
