/* The GEMM engine's data (gemm_tilings.c): the named tilings of the
 * library's GEMM kernels, the size classes products fall into, and the
 * defaults that map a device, a size class, an operand form and a precision
 * to tilings.  Adding a tiling is adding a row; a default, a row of the
 * defaults; docs/architecture.md shows how. */
#ifndef GMLP_GEMM_TILINGS_H
#define GMLP_GEMM_TILINGS_H

#include <stdbool.h>

#include "cl/context.h"
#include "core/half.h"
#include "kernel_abi.h"

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

/* The format a product rounds its operands to before multiplying them
 * (fp32 accumulation always; cl_kernels/precision.cl): the precision modes.
 * The values are kernel_abi.h's GMLP_GEMM_PREC_*. */
typedef enum gmlp_gemm_precision {
    GMLP_GEMM_FP32 = GMLP_GEMM_PREC_FP32,
    GMLP_GEMM_TF32 = GMLP_GEMM_PREC_TF32,
    GMLP_GEMM_FP16 = GMLP_GEMM_PREC_FP16,
    GMLP_GEMM_BF16 = GMLP_GEMM_PREC_BF16,
    GMLP_GEMM_PRECISIONS
} gmlp_gemm_precision;
/* A set of precisions (a tiling's, a default row's); 0 stands for all. */
#define GMLP_GEMM_PREC_SET(p) (1u << (p))
#define GMLP_GEMM_LOW_PRECISIONS                                                                              \
    (GMLP_GEMM_PREC_SET(GMLP_GEMM_TF32) | GMLP_GEMM_PREC_SET(GMLP_GEMM_FP16) | GMLP_GEMM_PREC_SET(GMLP_GEMM_BF16))
/* The precision's name, as users write it: "fp32", "tf32", "fp16", "bf16". */
const char *gmlp_gemm_precision_name(gmlp_gemm_precision p);

/* Matrix engines a tiling may need (gmlp_tiling.needs); a device has those
 * its architecture has (gmlp_devinfo.engines, lib/ops/gemm_engines.c), and
 * a tiling's variant runs once the rest of the capability ladder passed. */
#define GMLP_ENGINE_MMA_SYNC (1u << 0)    /* NVIDIA's warp-level mma.sync, sm_80 and later */
#define GMLP_ENGINE_XMX8 (1u << 1)        /* Intel's sub-group matrix multiply-accumulate (dpas), SIMD8: DG2 */
#define GMLP_ENGINE_XMX16 (1u << 2)       /* the same, SIMD16: PVC, Xe2 */
#define GMLP_ENGINE_XMX16_TF32 (1u << 3)  /* its TF32 form (cl_intel_subgroup_matrix_multiply_accumulate_tf32) */
#define GMLP_ENGINE_MFMA (1u << 4)        /* AMD's MFMA: gfx908, gfx90a, gfx94x (ROCm) */
#define GMLP_ENGINE_MFMA_BF16 (1u << 5)   /* its bf16_1k form: gfx90a, gfx94x (not gfx908) */
#define GMLP_ENGINE_WMMA32 (1u << 6)      /* AMD's WMMA in wave32: gfx11 */
#define GMLP_ENGINE_WMMA64 (1u << 7)      /* and in wave64 */
/* x86's AVX512_BF16 (vdpbf16ps) on a CPU device that runs on the host (PoCL's:
 * its OpenCL C reaches the instruction through a target attribute), the
 * host having it; the direct kernel's dpbf16 tilings */
#define GMLP_ENGINE_AVX512_BF16 (1u << 8)
/* NVIDIA Hopper's warp-group wgmma (sm_90 exactly: Blackwell has none), its
 * instructions spliced into the PTX (ops/wgmma_splice.h) */
#define GMLP_ENGINE_WGMMA (1u << 9)
/* bits 10 to 30: the next engines' */
/* Tests only: the engines' tilings build with their instructions emulated
 * (portably, by their documented semantics) on a device without them. */
#define GMLP_ENGINE_EMULATED (1u << 31)

/* A matrix engine: how its tilings are named (and its programs' target in
 * gmlp_diag_programs), the architectures that have it, its instruction's
 * shape, the least local memory its devices give a work-group, and what
 * runs each precision on it (reports; NULL: it runs none). */
typedef struct gmlp_engine {
    unsigned bit;
    const char *prefix;
    gmlp_vendor vendor;
    const char *archs;              /* as compilers name them, space-separated: AMD's detection reads them
                                     * (gmlp_engines_for); the portability suite compiles for those it knows */
    int wave;                       /* AMD: the wavefront the device must run, 0 any */
    int lanes;                      /* the sub-group (warp, wavefront) one instruction takes */
    int m, n;                       /* its output block */
    int k[GMLP_GEMM_PRECISIONS];    /* its depth per precision it runs */
    size_t local_mem;               /* bytes: NVIDIA's OpenCL gives every GPU 48 KiB */
    const char *op[GMLP_GEMM_PRECISIONS];
    size_t probed_local_mem;        /* bytes a work-group may stage past the reported size where the driver
                                     * accepts it (NVIDIA's OpenCL reports 48 KiB on a Hopper that has 227):
                                     * each variant's launch in the ladder's self-test is the probe; 0: the
                                     * reported size alone */
} gmlp_engine;
/* The engine whose bit is needs' lowest; NULL for none. */
const gmlp_engine *gmlp_engine_of(unsigned needs);
/* The engines' table, *n rows in bit order. */
const gmlp_engine *gmlp_engines(size_t *n);
/* Whether engine e lists architecture arch (a whole word of e->archs). */
bool gmlp_engine_has_arch(const gmlp_engine *e, const char *arch);

/* One tiling of a GEMM kernel.  tm x tn outputs per work-group, wm x wn per
 * work-item, tk-deep slices (the direct kernel has none: 1); loads (direct:
 * arithmetic) up to vw floats wide. */
typedef struct gmlp_tiling {
    const char *name;               /* how reports, the tuner and tuning files name it */
    const gmlp_kernel_spec *kernel; /* file and entry: gmlp_gemm_tiled or gmlp_gemm_direct */
    int tm, tn, tk, wm, wn, vw;
    cl_device_type devices;         /* 0: any; CL_DEVICE_TYPE_CPU: a block too large for a GPU's registers */
    gmlp_vendor vendor;             /* GMLP_VENDOR_ANY, or the one GPU vendor whose registers hold it unspilled */
    unsigned needs;                 /* GMLP_ENGINE_* it needs */
    unsigned precisions;            /* GMLP_GEMM_PREC_SETs it runs; 0: all (portable: rounds as it loads) */
    int subgroup;                   /* the sub-group size it needs; 0: any */
    const char *defines;            /* -D options its kernel needs beside the tiling's; NULL: none */
    int stages;                     /* gemm_mma.cl: slices in flight through cp.async (2 to 4); 0: through registers */
    int ldsm;                       /* gemm_mma.cl, 16-bit formats through registers: fragments by ldmatrix */
    int swizzle;                    /* gemm_mma.cl, cp.async: 16-bit operand slices swizzled, read by ldmatrix */
    int frag2;                      /* gemm_mma.cl, cp.async: fragments double-buffered, the slice loop pipelined */
    int raster;                     /* gemm_mma.cl: blocks of C walked in bands of this many block rows (L2
                                     * reuse); 0: the launch's order */
    int wgmma;                      /* gemm_mma.cl, cp.async, swizzled: the products on Hopper's wgmma (a warp
                                     * group per 64 rows; the instruction's 16-bit operands only) */
    bool native_vw;                 /* only where the device's native float vectors are vw wide or wider (a
                                     * CPU block whose accumulators fill AVX-512's registers would spill in
                                     * AVX2's, split in two) */
} gmlp_tiling;

extern const gmlp_kernel_spec gmlp_gemm_tiled, gmlp_gemm_direct, gmlp_gemm_mma, gmlp_gemm_xmx, gmlp_gemm_mfma;

static inline bool gmlp_tiling_direct(const gmlp_tiling *t)
{
    return t->kernel == &gmlp_gemm_direct;
}
/* Whether t's kernel has the fused LayerNorm's halves (a prologue, row
 * statistics: the portable kernels, direct and tiled). */
static inline bool gmlp_tiling_fuses(const gmlp_tiling *t)
{
    return t->kernel == &gmlp_gemm_direct || t->kernel == &gmlp_gemm_tiled;
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

/* Split-K (gemm_split.c): a product of few output tiles over a deep k runs
 * as parts of its k range, each part's work-groups writing partial sums that
 * one reduction adds (then the epilogue), so that the tiles times the parts
 * cover the compute units.  Per device type and vendor: the first row that
 * matches the device applies. */
typedef struct gmlp_gemm_split_row {
    cl_device_type devices; /* 0: any */
    gmlp_vendor vendor;     /* GMLP_VENDOR_ANY: any */
    size_t min_k;           /* split products at least this deep */
    size_t part_k;          /* and each part at least this deep */
    size_t max_parts;       /* at most this many parts; 0: never split */
    const char *measured;   /* where the numbers come from */
} gmlp_gemm_split_row;
/* The most parts GMLP_GEMM_SPLIT may force (and a row may allow). */
#define GMLP_GEMM_SPLIT_MAX 64

/* The forms of a model's products a device runs, per device type and
 * vendor (the first row that matches applies):
 * - the fused LayerNorm (ops.h's gmlp_gemm_norm): which of its halves runs
 *   fused; where a half is not taken the LayerNorm runs as a kernel of its
 *   own, as it does wherever a product's tiling lacks the halves
 *   (gmlp_gemm_fuses);
 * - the linear layers' weights: as the file stores them (out x in, the
 *   products NT) or packed at load as in x out (NN: on CPUs, the direct
 *   kernel's outer products, a cache line of B per k step, where NT's dot
 *   products load an A and a B vector per four FMAs), or in x out as pairs
 *   along k (NN through instructions that take k's pairs adjacent:
 *   vdpbf16ps, one load of B a 16 columns x 2 k). */
typedef enum gmlp_linear_layout {
    GMLP_LINEAR_FILE,  /* out x in */
    GMLP_LINEAR_KN,    /* in x out */
    GMLP_LINEAR_PAIRS, /* in x out as pairs along k (ops.h's gmlp_view.pairs) */
} gmlp_linear_layout;
typedef struct gmlp_gemm_forms_row {
    cl_device_type devices; /* 0: any */
    gmlp_vendor vendor;     /* GMLP_VENDOR_ANY: any */
    bool norm_a;            /* op(A) normalised as it loads (fc1), C's row statistics from its producer */
    bool norm_b;            /* op(B)'s rows so (the spatial GEMM's LN(v), the token MLPs' LN(x)) */
    bool linear_kn;         /* image models' linear weights stored in x out */
    unsigned pairs_precisions; /* ... and as pairs along k in these precisions (GMLP_GEMM_PREC_SETs) where the
                                * device has the engines pairs_needs: instructions that take k's pairs adjacent */
    unsigned pairs_needs;
    const char *measured;   /* where the choices come from */
} gmlp_gemm_forms_row;
/* The forms row for device d. */
const gmlp_gemm_forms_row *gmlp_gemm_forms_for(const gmlp_devinfo *d);

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
    unsigned precisions;      /* GMLP_GEMM_PREC_SETs; 0: any */
    const char *tilings[GMLP_GEMM_ROW_TILINGS]; /* names, in order of preference; NULL past the last */
    const char *measured;     /* the bench/NOTES.md entry that chose them */
} gmlp_gemm_default;

/* Every tiling: the defaults' and the tuner's other candidates. */
const gmlp_tiling *gmlp_gemm_tilings(size_t *n);
/* The tiling of that name; NULL if none. */
const gmlp_tiling *gmlp_gemm_tiling_named(const char *name);
/* Whether device d may run tiling t: its type, vendor, engines and limits. */
bool gmlp_gemm_tiling_fits(const gmlp_devinfo *d, const gmlp_tiling *t);
/* The local memory t's work-groups may stage on d: the reported size, or
 * past it its engine's probed size (gmlp_engine.probed_local_mem). */
size_t gmlp_gemm_tiling_local_limit(const gmlp_devinfo *d, const gmlp_tiling *t);
/* Whether t runs products of precision p. */
bool gmlp_gemm_tiling_runs(const gmlp_tiling *t, gmlp_gemm_precision p);
/* Whether t's kernel stores a C of elements c: float always; 16-bit (a
 * value rounded once, after the epilogue) where it applies the epilogue to
 * the accumulators, not in a second sweep over C. */
bool gmlp_gemm_tiling_stores(const gmlp_tiling *t, gmlp_elem c);
/* What runs t's products in precision p, for reports: "portable", or its
 * engine and instruction shape ("mma.sync m16n8k8"). */
const char *gmlp_gemm_tiling_engine(const gmlp_tiling *t, gmlp_gemm_precision p);
/* Bytes of local memory t's work-groups stage: the least over the operand
 * storages it takes (gmlp_gemm_tiling_fits: some product fits). */
size_t gmlp_gemm_tiling_local_bytes(const gmlp_tiling *t);
/* A product's operands as a kernel stages them: their storages, whether
 * each is stored along k (op(A) not transposed, op(B) transposed), and the
 * precision. */
typedef struct gmlp_gemm_operands {
    gmlp_elem a, b;
    bool a_along_k, b_along_k;
    gmlp_gemm_precision precision;
} gmlp_gemm_operands;
/* Bytes of local memory t's work-groups stage for those operands: the
 * cp.async staging holds them as stored (16-bit storage half a float's
 * bytes); the others the same for any. */
size_t gmlp_gemm_tiling_form_bytes(const gmlp_tiling *t, const gmlp_gemm_operands *o);
/* Whether t's kernel takes products of operands o: a wgmma row only
 * operands stored as the instruction's 16-bit bits (its descriptors name
 * them in local memory as copied); every other, any. */
bool gmlp_gemm_tiling_takes(const gmlp_tiling *t, const gmlp_gemm_operands *o);
/* Whether some default names t (the portability suite builds defaults in every form). */
bool gmlp_gemm_tiling_is_default(const gmlp_tiling *t);

/* The size-class thresholds for device d. */
const gmlp_gemm_sizes *gmlp_gemm_sizes_for(const gmlp_devinfo *d);
/* The split-K row for device d. */
const gmlp_gemm_split_row *gmlp_gemm_split_for(const gmlp_devinfo *d);
/* How many parts d's row splits a product of tiles output tiles (its
 * tiling's work-groups) over a k this deep into: 1 for none. */
size_t gmlp_gemm_split_parts(const gmlp_devinfo *d, size_t tiles, size_t k);
/* The first default row for a product of this class, form and precision on
 * d, and (*fallback) the row every product falls back to when none of the
 * matching rows' tilings fits. */
const gmlp_gemm_default *gmlp_gemm_default_for(const gmlp_devinfo *d, gmlp_gemm_size size, gmlp_gemm_form form,
                                               gmlp_gemm_precision precision, const gmlp_gemm_default **fallback);
/* The matching row after prev (NULL: the first); NULL past the last. */
const gmlp_gemm_default *gmlp_gemm_default_next(const gmlp_devinfo *d, gmlp_gemm_size size, gmlp_gemm_form form,
                                                gmlp_gemm_precision precision, const gmlp_gemm_default *prev);

#endif
