/* safetensors: 8-byte little-endian header length N, N bytes of JSON
 * (a UTF-8 object, optionally padded with trailing spaces), then the data
 * section, which the tensors' data_offsets must tile exactly.  Everything a
 * hostile file could get wrong is refused here, so later layers may trust
 * shapes, sizes and data pointers. */
#include "safetensors.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/half.h"
#include "format/json.h"

#define MAX_HEADER ((uint64_t)100 << 20) /* the reference implementation's limit */
#define MAX_DEPTH 64                     /* a valid header nests 3 levels deep */

static const struct {
    const char *name;
    size_t size;
} dtypes[] = {
    [GMLP_DT_BOOL] = {"BOOL", 1},   [GMLP_DT_U8] = {"U8", 1},           [GMLP_DT_I8] = {"I8", 1},
    [GMLP_DT_F8_E5M2] = {"F8_E5M2", 1}, [GMLP_DT_F8_E4M3] = {"F8_E4M3", 1}, [GMLP_DT_I16] = {"I16", 2},
    [GMLP_DT_U16] = {"U16", 2},     [GMLP_DT_F16] = {"F16", 2},         [GMLP_DT_BF16] = {"BF16", 2},
    [GMLP_DT_I32] = {"I32", 4},     [GMLP_DT_U32] = {"U32", 4},         [GMLP_DT_F32] = {"F32", 4},
    [GMLP_DT_F64] = {"F64", 8},     [GMLP_DT_I64] = {"I64", 8},         [GMLP_DT_U64] = {"U64", 8},
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

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = gmlp_malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

void gmlp_st_free(gmlp_st_file *f)
{
    if (!f)
        return;
    for (size_t i = 0; f->tensors && i < f->n_tensors; i++)
        free(f->tensors[i].name);
    for (size_t i = 0; i < f->n_meta; i++) {
        free(f->meta_keys[i]);
        free(f->meta_values[i]);
    }
    free(f->tensors);
    free(f->meta_keys);
    free(f->meta_values);
    memset(f, 0, sizeof *f);
}

/* What a file that is not safetensors looks like, for the message. */
static const char *file_kind(const uint8_t *p, size_t n)
{
    static const struct {
        const char *magic;
        size_t len;
        const char *kind;
    } kinds[] = {
        {"PK\3\4", 4, " (a zip archive, as PyTorch saves .pth/.bin checkpoints: tools/export_vision.py converts them)"},
        {"\x80\x02", 2, " (a pickle, as older PyTorch saves checkpoints: tools/export_vision.py converts them)"},
        {"\x89PNG", 4, " (a PNG image)"},
        {"\xff\xd8\xff", 3, " (a JPEG image)"},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (n >= kinds[i].len && !memcmp(p, kinds[i].magic, kinds[i].len))
            return kinds[i].kind;
    return "";
}

static gmlp_status parse_metadata(json_t *meta, gmlp_st_file *f, gmlp_error *err)
{
    if (!json_is_object(meta))
        return gmlp_fail(err, GMLP_ERR_FORMAT, "__metadata__ is not a JSON object of strings");
    size_t n = json_object_size(meta);
    /* n_meta counts only complete pairs, so a partial copy frees cleanly */
    f->meta_keys = gmlp_calloc(n ? n : 1, sizeof *f->meta_keys);
    f->meta_values = gmlp_calloc(n ? n : 1, sizeof *f->meta_values);
    if (!f->meta_keys || !f->meta_values)
        return gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "out of host memory reading __metadata__");
    const char *key;
    json_t *val;
    json_object_foreach(meta, key, val) {
        if (!json_is_string(val))
            return gmlp_fail(err, GMLP_ERR_FORMAT, "__metadata__: metadata key '%s' is not a string (%s)",
                             key, gmlp_json_kind(val));
        char *k = dup_str(key), *v = dup_str(json_string_value(val));
        if (!k || !v) {
            free(k);
            free(v);
            return gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "out of host memory reading __metadata__");
        }
        f->meta_keys[f->n_meta] = k;
        f->meta_values[f->n_meta] = v;
        f->n_meta++;
    }
    return GMLP_OK;
}

/* A JSON integer >= 0 (jansson stores integers as long long). */
static int get_uint(json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return 0;
    *out = (uint64_t)json_integer_value(v);
    return 1;
}

static gmlp_status parse_tensor(const char *name, json_t *entry, const uint8_t *data, size_t data_size,
                                gmlp_st_tensor *t, gmlp_error *err)
{
    if (!json_is_object(entry))
        return gmlp_fail(err, GMLP_ERR_FORMAT,
                         "tensor '%s': entry is not a JSON object with dtype, shape and data_offsets", name);
    const char *key;
    json_t *val;
    json_object_foreach(entry, key, val) {
        if (strcmp(key, "dtype") && strcmp(key, "shape") && strcmp(key, "data_offsets"))
            return gmlp_fail(err, GMLP_ERR_FORMAT,
                             "tensor '%s': unexpected key '%s' (allowed: dtype, shape, data_offsets)", name, key);
    }
    static const char *const required[] = {"dtype", "shape", "data_offsets"};
    for (size_t i = 0; i < 3; i++)
        if (!json_object_get(entry, required[i]))
            return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s': missing %s", name, required[i]);

    json_t *dtype = json_object_get(entry, "dtype");
    if (!json_is_string(dtype))
        return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s': dtype is not a string", name);
    if (!dtype_from_name(json_string_value(dtype), &t->dtype))
        return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s': unknown dtype '%s'", name,
                         json_string_value(dtype));

    json_t *shape = json_object_get(entry, "shape");
    if (!json_is_array(shape))
        return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s': shape is not an array", name);
    size_t ndim = json_array_size(shape);
    if (ndim > GMLP_ST_MAX_DIMS)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s': shape has %zu dimensions (at most %d)", name,
                         ndim, GMLP_ST_MAX_DIMS);
    t->ndim = (int)ndim;
    int has_zero = 0;
    for (size_t i = 0; i < ndim; i++) {
        uint64_t d;
        if (!get_uint(json_array_get(shape, i), &d))
            return gmlp_fail(err, GMLP_ERR_FORMAT,
                             "tensor '%s': shape entry %zu is not a non-negative integer", name, i);
        t->shape[i] = (int64_t)d;
        has_zero |= d == 0;
    }
    /* A zero dimension makes the product 0 whatever the others are. */
    size_t numel = 1, esize = dtypes[t->dtype].size;
    for (size_t i = 0; i < ndim && !has_zero; i++) {
        uint64_t d = (uint64_t)t->shape[i];
        if (d > SIZE_MAX || numel > SIZE_MAX / (size_t)d)
            return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s': shape element count overflows", name);
        numel *= (size_t)d;
    }
    if (has_zero)
        numel = 0;
    if (numel > SIZE_MAX / esize)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s': shape x dtype %s size overflows", name,
                         dtypes[t->dtype].name);
    t->numel = numel;

    json_t *offsets = json_object_get(entry, "data_offsets");
    uint64_t begin, end;
    if (!json_is_array(offsets) || json_array_size(offsets) != 2)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s': data_offsets is not a [begin, end] array", name);
    if (!get_uint(json_array_get(offsets, 0), &begin) || !get_uint(json_array_get(offsets, 1), &end))
        return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s': data_offsets are not non-negative integers",
                         name);
    if (begin > end)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s': data_offsets [%llu, %llu] are reversed", name,
                         (unsigned long long)begin, (unsigned long long)end);
    if (end > data_size)
        return gmlp_fail(err, GMLP_ERR_FORMAT,
                         "tensor '%s': data_offsets end %llu is past the data section (%zu bytes; truncated file?)",
                         name, (unsigned long long)end, data_size);
    if (end - begin != numel * esize)
        return gmlp_fail(err, GMLP_ERR_FORMAT,
                         "tensor '%s': data_offsets [%llu, %llu] span %llu bytes, but shape x dtype %s needs %zu", name,
                         (unsigned long long)begin, (unsigned long long)end, (unsigned long long)(end - begin),
                         dtypes[t->dtype].name, numel * esize);
    t->data = data + begin;
    t->nbytes = (size_t)(end - begin);
    if (!(t->name = dup_str(name)))
        return gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "out of host memory");
    return GMLP_OK;
}

/* By begin, then size (a zero-length tensor sorts before a tensor starting at
 * the same offset), then name, so the order is fully determined. */
static int by_offset(const void *a, const void *b)
{
    const gmlp_st_tensor *x = a, *y = b;
    if (x->data != y->data)
        return x->data < y->data ? -1 : 1;
    if (x->nbytes != y->nbytes)
        return x->nbytes < y->nbytes ? -1 : 1;
    return strcmp(x->name, y->name);
}

static gmlp_status check_tiling(gmlp_st_file *f, const uint8_t *data, size_t data_size, gmlp_error *err)
{
    qsort(f->tensors, f->n_tensors, sizeof *f->tensors, by_offset);
    size_t pos = 0;
    for (size_t i = 0; i < f->n_tensors; i++) {
        const gmlp_st_tensor *t = &f->tensors[i], *prev = i ? &f->tensors[i - 1] : NULL;
        size_t begin = (size_t)(t->data - data);
        if (begin > pos && !prev)
            return gmlp_fail(err, GMLP_ERR_FORMAT,
                             "tensor '%s': data_offsets begin at %zu, leaving a gap of %zu bytes at the start of the "
                             "data section",
                             t->name, begin, begin);
        if (begin > pos)
            return gmlp_fail(err, GMLP_ERR_FORMAT,
                             "tensor '%s': data_offsets begin at %zu, leaving a gap of %zu bytes after tensor '%s' "
                             "(which ends at %zu)",
                             t->name, begin, begin - pos, prev->name, pos);
        if (begin < pos)
            return gmlp_fail(err, GMLP_ERR_FORMAT,
                             "tensor '%s': data_offsets [%zu, %zu] overlap tensor '%s' [%zu, %zu]", t->name, begin,
                             begin + t->nbytes, prev->name, (size_t)(prev->data - data), pos);
        pos = begin + t->nbytes;
    }
    if (pos != data_size && f->n_tensors)
        return gmlp_fail(err, GMLP_ERR_FORMAT,
                         "%zu trailing bytes in the data section after the last tensor '%s' (data_offsets end at %zu "
                         "of %zu)",
                         data_size - pos, f->tensors[f->n_tensors - 1].name, pos, data_size);
    if (pos != data_size)
        return gmlp_fail(err, GMLP_ERR_FORMAT,
                         "%zu trailing bytes in the data section, but no tensor has data_offsets", data_size);
    return GMLP_OK;
}

static gmlp_status parse_header(json_t *root, const uint8_t *data, size_t data_size, gmlp_st_file *f, gmlp_error *err)
{
    if (!json_is_object(root)) /* unreachable after the '{' check; kept against future changes */
        return gmlp_fail(err, GMLP_ERR_FORMAT, "header JSON is not an object");
    size_t n = json_object_size(root);
    f->tensors = gmlp_calloc(n ? n : 1, sizeof *f->tensors);
    if (!f->tensors)
        return gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "out of host memory reading the header");
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val) {
        if (!strcmp(key, "__metadata__")) {
            GMLP_TRY(parse_metadata(val, f, err));
            continue;
        }
        /* counted only once complete (name set), so gmlp_st_free frees exactly what exists */
        GMLP_TRY(parse_tensor(key, val, data, data_size, &f->tensors[f->n_tensors], err));
        f->n_tensors++;
    }
    return check_tiling(f, data, data_size, err);
}

gmlp_status gmlp_st_parse(const uint8_t *buf, size_t size, gmlp_st_file *out, gmlp_error *err)
{
    memset(out, 0, sizeof *out);
    if (!buf || size < 8)
        return gmlp_fail(err, GMLP_ERR_FORMAT,
                         "file is %zu bytes: too short for the 8-byte header length (truncated?)", buf ? size : 0);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | buf[i];
    /* implausible first bytes are another kind of file, not a damaged safetensors one */
    if (hlen < 2 || hlen > MAX_HEADER || (size > 8 && buf[8] != '{'))
        return gmlp_fail(err, GMLP_ERR_FORMAT,
                         "not a safetensors file%s: it starts with header length %llu and byte 0x%02x, where a "
                         "safetensors file has a little-endian length in [2, %llu] and '{'",
                         file_kind(buf, size), (unsigned long long)hlen, size > 8 ? buf[8] : 0,
                         (unsigned long long)MAX_HEADER);
    /* compared against size - 8 so no sum can wrap, whatever the length field says */
    if (hlen > size - 8)
        return gmlp_fail(err, GMLP_ERR_FORMAT,
                         "header length %llu exceeds the %zu bytes after it (truncated file?)",
                         (unsigned long long)hlen, size - 8);
    const uint8_t *header = buf + 8;
    if (!gmlp_json_nesting_ok(header, (size_t)hlen, MAX_DEPTH))
        return gmlp_fail(err, GMLP_ERR_FORMAT, "header JSON nests deeper than %d levels", MAX_DEPTH);
    /* jansson leaves the error code unset (and the text empty) when some
     * allocations fail, so start from zeros */
    json_error_t jerr;
    memset(&jerr, 0, sizeof jerr);
    /* trailing-space padding is JSON whitespace, which jansson accepts after the value */
    json_t *root = gmlp_json_loadb((const char *)header, (size_t)hlen, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        if (!jerr.text[0])
            return gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "out of host memory parsing the header");
#if JANSSON_VERSION_HEX >= 0x020b00
        if (json_error_code(&jerr) == json_error_out_of_memory)
            return gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "out of host memory parsing the header");
        if (json_error_code(&jerr) == json_error_invalid_utf8)
            return gmlp_fail(err, GMLP_ERR_FORMAT, "header is not valid UTF-8: %s at byte %d", jerr.text,
                             jerr.position);
#endif
        return gmlp_fail(err, GMLP_ERR_FORMAT, "header is not valid JSON: %s at byte %d", jerr.text,
                         jerr.position);
    }
    gmlp_status st = parse_header(root, header + hlen, size - 8 - (size_t)hlen, out, err);
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

int gmlp_st_to_f32(const gmlp_st_tensor *t, float *dst)
{
    const uint8_t *p = t->data;
    if (t->dtype == GMLP_DT_F32) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        for (size_t i = 0; i < t->numel; i++) {
            const uint8_t *q = p + 4 * i;
            uint32_t bits = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
            memcpy(&dst[i], &bits, sizeof bits);
        }
#else
        /* data may sit at any alignment in the file: memcpy, never a float* cast */
        if (t->numel)
            memcpy(dst, p, t->numel * sizeof *dst);
#endif
        return 0;
    }
    if (t->dtype != GMLP_DT_F16 && t->dtype != GMLP_DT_BF16)
        return -1;
    for (size_t i = 0; i < t->numel; i++) {
        uint16_t v = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
        if (t->dtype == GMLP_DT_F16) {
            dst[i] = gmlp_half_to_float(v);
        } else {
            uint32_t bits = (uint32_t)v << 16;
            memcpy(&dst[i], &bits, sizeof bits);
        }
    }
    return 0;
}
