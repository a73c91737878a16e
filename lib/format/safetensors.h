/* Parsing and validation of the safetensors format (no OpenCL, no model
 * knowledge).  https://github.com/huggingface/safetensors — 8-byte
 * little-endian header length N, N bytes of UTF-8 JSON, then the data. */
#ifndef GMLP_SAFETENSORS_H
#define GMLP_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define GMLP_ST_MAX_DIMS 8

typedef enum gmlp_dtype {
    GMLP_DT_BOOL, GMLP_DT_U8, GMLP_DT_I8, GMLP_DT_F8_E5M2, GMLP_DT_F8_E4M3,
    GMLP_DT_I16, GMLP_DT_U16, GMLP_DT_F16, GMLP_DT_BF16,
    GMLP_DT_I32, GMLP_DT_U32, GMLP_DT_F32,
    GMLP_DT_F64, GMLP_DT_I64, GMLP_DT_U64,
} gmlp_dtype;

typedef struct gmlp_st_tensor {
    char *name;
    gmlp_dtype dtype;
    int ndim;
    int64_t shape[GMLP_ST_MAX_DIMS];
    size_t numel;
    const uint8_t *data; /* points into the caller's buffer */
    size_t nbytes;
} gmlp_st_tensor;

typedef struct gmlp_st_file {
    gmlp_st_tensor *tensors; /* in file order of data_offsets */
    size_t n_tensors;
    char **meta_keys; /* __metadata__, in file order */
    char **meta_values;
    size_t n_meta;
} gmlp_st_file;

/* Validates everything the format requires: header length within the buffer,
 * header a JSON object (strict UTF-8), each entry {dtype, shape, data_offsets}
 * with known dtype, non-negative shape, overflow-checked sizes, offsets that
 * match shape x dtype size and tile the data section exactly (no gaps, no
 * overlaps), __metadata__ a string→string object.  The buffer must outlive
 * *out (tensor data points into it).  On failure returns GMLP_ERR_FORMAT
 * (or GMLP_ERR_HOST_MEMORY) with a message naming the tensor and the problem
 * in err, and *out zeroed. */
gmlp_status gmlp_st_parse(const uint8_t *buf, size_t size, gmlp_st_file *out, gmlp_error *err);
void gmlp_st_free(gmlp_st_file *f);

const gmlp_st_tensor *gmlp_st_find(const gmlp_st_file *f, const char *name);
const char *gmlp_st_meta(const gmlp_st_file *f, const char *key);
const char *gmlp_dtype_name(gmlp_dtype dt);
size_t gmlp_dtype_size(gmlp_dtype dt);

/* Converts an F32, F16 or BF16 tensor to float (dst holds t->numel floats).
 * Returns 0, or -1 for any other dtype. */
int gmlp_st_to_f32(const gmlp_st_tensor *t, float *dst);

#endif
