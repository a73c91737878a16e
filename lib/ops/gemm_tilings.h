/* The GEMM engine's data (gemm_tilings.c): the named tilings of the
 * library's GEMM kernels, the size classes products fall into, and the
 * defaults that map a device, a size class, an operand form and a precision
 * to tilings.  Adding a tiling is adding a row; a default, a row of the
 * defaults; docs/architecture.md shows how. */
#ifndef GMLP_GEMM_TILINGS_H
#define GMLP_GEMM_TILINGS_H

#include <stdbool.h>

#include "cl/context.h"

/* The size classes a product is chosen a tiling by (gmlp_gemm_class). */
typedef enum gmlp_gemm_size {
    GMLP_GEMM_SMALL,
    GMLP_GEMM_LARGE,
    GMLP_GEMM_NARROW,
    GMLP_GEMM_DEEP,
    GMLP_GEMM_CLASSES,
    GMLP_GEMM_ANY_SIZE = GMLP_GEMM_CLASSES /* in a defaults row */
} gmlp_gemm_size;

/* The operand form: which operands are used transposed. */
typedef enum gmlp_gemm_form {
    GMLP_FORM_NN, /* token mixing: weights x activations; attention */
    GMLP_FORM_NT, /* the linear layers: activations x weights^T */
    GMLP_FORM_TN,
    GMLP_FORM_TT,
    GMLP_FORM_ANY /* in a defaults row */
} gmlp_gemm_form;

/* The arithmetic a kernel does.  Only FP32 so far: TF32, FP16 and BF16 come
 * with the precision modes and the matrix engines, as rows of their own. */
typedef enum gmlp_gemm_precision { GMLP_GEMM_FP32, GMLP_GEMM_PRECISIONS } gmlp_gemm_precision;

/* One tiling of a GEMM kernel.  tm x tn outputs per work-group, wm x wn per
 * work-item, tk-deep slices (the direct kernel has none: 1); loads (direct:
 * arithmetic) up to vw floats wide. */
typedef struct gmlp_tiling {
    const char *name;               /* how reports, the tuner and tuning files name it */
    const gmlp_kernel_spec *kernel; /* file and entry: gmlp_gemm_tiled or gmlp_gemm_direct */
    int tm, tn, tk, wm, wn, vw;
    cl_device_type devices;         /* 0: any; CL_DEVICE_TYPE_CPU: a block too large for a GPU's registers */
    gmlp_vendor vendor;             /* GMLP_VENDOR_ANY, or the one GPU vendor whose registers hold it unspilled */
    unsigned needs;                 /* device capabilities it needs (none yet: the matrix engines' will) */
    gmlp_gemm_precision precision;
    int subgroup;                   /* the sub-group size it needs; 0: any */
} gmlp_tiling;

extern const gmlp_kernel_spec gmlp_gemm_tiled, gmlp_gemm_direct;

static inline bool gmlp_tiling_direct(const gmlp_tiling *t)
{
    return t->kernel == &gmlp_gemm_direct;
}

/* Where products change size class, per device type. */
typedef struct gmlp_gemm_sizes {
    cl_device_type devices;     /* 0: any */
    size_t narrow;              /* at most this many rows or columns: narrow */
    size_t large_tile;          /* the large tilings' tm and tn */
    size_t large_groups_per_cu; /* large once the large tiles give each compute unit this many work-groups */
    size_t small_tile;          /* the small tilings' widest tm and tn */
    size_t deep_k;              /* deep: k at least this, small tiles leaving compute units idle; 0: no deep class */
    const char *measured;       /* where the numbers come from */
} gmlp_gemm_sizes;

/* A default: the tilings, in order of preference, that products of one size
 * class, form and precision run on devices of one type, vendor and
 * architecture.  The first row that matches a product applies. */
#define GMLP_GEMM_ROW_TILINGS 6
typedef struct gmlp_gemm_default {
    cl_device_type devices;   /* 0: any */
    gmlp_vendor vendor;       /* GMLP_VENDOR_ANY: any */
    const char *arch;         /* a prefix of gmlp_devinfo.arch; NULL: any */
    gmlp_gemm_size size;      /* or GMLP_GEMM_ANY_SIZE */
    gmlp_gemm_form form;      /* or GMLP_FORM_ANY */
    gmlp_gemm_precision precision;
    const char *tilings[GMLP_GEMM_ROW_TILINGS]; /* names, in order of preference; NULL past the last */
    const char *measured;     /* the bench/NOTES.md entry that chose them */
} gmlp_gemm_default;

/* Every tiling: the defaults' and the tuner's other candidates. */
const gmlp_tiling *gmlp_gemm_tilings(size_t *n);
/* The tiling of that name; NULL if none. */
const gmlp_tiling *gmlp_gemm_tiling_named(const char *name);
/* Whether device d may run tiling t: its type, vendor and limits. */
bool gmlp_gemm_tiling_fits(const gmlp_devinfo *d, const gmlp_tiling *t);
/* Bytes of local memory t's work-groups stage. */
size_t gmlp_gemm_tiling_local_bytes(const gmlp_tiling *t);
/* Whether some default names t (the portability suite builds defaults in every form). */
bool gmlp_gemm_tiling_is_default(const gmlp_tiling *t);

/* The size-class thresholds for device d. */
const gmlp_gemm_sizes *gmlp_gemm_sizes_for(const gmlp_devinfo *d);
/* The first default row for a product of this class, form and precision on
 * d, and (*fallback) the row every product falls back to when none of the
 * first row's tilings fits. */
const gmlp_gemm_default *gmlp_gemm_default_for(const gmlp_devinfo *d, gmlp_gemm_size size, gmlp_gemm_form form,
                                               gmlp_gemm_precision precision, const gmlp_gemm_default **fallback);

#endif
