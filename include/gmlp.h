/*
 * gmlp.h — gMLP and MLP-Mixer inference on any OpenCL device.
 *
 * Worked example (error handling shortened):
 *
 *     gmlp_context *ctx;
 *     gmlp_model *model;
 *     if (gmlp_context_create(NULL, &ctx) != GMLP_OK) {
 *         fprintf(stderr, "%s\n", gmlp_last_error(NULL));
 *         return 1;
 *     }
 *     if (gmlp_model_load(ctx, "model.safetensors", &model) != GMLP_OK) {
 *         fprintf(stderr, "%s\n", gmlp_last_error(ctx));
 *         ...
 *     }
 *     gmlp_config cfg = {.size = sizeof cfg};
 *     gmlp_model_config(model, &cfg);
 *     float *images = ...;   // batch x cfg.in_chans x cfg.img_h x cfg.img_w, normalised
 *     float *logits = malloc(batch * cfg.num_classes * sizeof *logits);
 *     gmlp_classify(model, images, batch, logits);
 *     gmlp_model_free(model);
 *     gmlp_context_destroy(ctx);
 *
 * Threads: a gmlp_context and the models loaded into it may be used from any
 * thread; calls on one context are serialised by an internal lock.  Use one
 * context per thread for parallel work on one device.
 *
 * Errors: every fallible call returns a gmlp_status.  The message goes to
 * gmlp_last_error(ctx) for calls on a context, model or state (their
 * context), and to gmlp_last_error(NULL), which is per thread, for the calls
 * without one: gmlp_context_create(_ex), gmlp_list_devices,
 * gmlp_device_report, gmlp_preprocess_rgb8(_batch), gmlp_softmax_topk and
 * gmlp_sample; and for any call whose context, model or state argument is
 * NULL (there is no context to hold the message).  Each function below that reports elsewhere says so.  The
 * library never prints unless asked to log (gmlp_context_options.log_level,
 * gmlp_set_log, $GMLP_LOG), never exits.
 *
 * Models: gmlp_model_load takes a safetensors file or a Hugging Face model
 * folder (model.safetensors and config.json, as timm's save_for_hf writes them
 * and the hub's timm repositories hold them).  A vision model's preprocessing
 * (image size, mean, std, crop_pct, crop_mode, interpolation, labels) comes,
 * key by key, from the first of: gmlp_model_override (the user), the file's
 * gmlp.* metadata, config.json, the architecture's defaults;
 * gmlp_model_config_source says which, gmlp_model_config_conflict where the
 * metadata and config.json disagree.
 *
 * ABI: every options struct, and gmlp_config, starts with `size_t size`,
 * which its _default() sets to sizeof the struct.  The library reads (and,
 * for gmlp_model_config, writes) only the fields that fit in `size` and takes
 * the defaults for the others, so the structs grow at the end without
 * breaking programs built against an older gmlp.h.  Fill them with their
 * _default() function (or set size), then change fields.
 */
#ifndef GMLP_H
#define GMLP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(GMLP_BUILDING_LIBRARY) && defined(_WIN32)
#define GMLP_API __declspec(dllexport) /* the DLL exports these alone (no auto-export) */
#elif defined(GMLP_BUILDING_LIBRARY) && defined(__GNUC__)
#define GMLP_API __attribute__((visibility("default")))
#else
#define GMLP_API
#endif

#include "gmlp_version.h" /* GMLP_VERSION_MAJOR / _MINOR / _PATCH, GMLP_VERSION_STRING */

typedef struct gmlp_context gmlp_context;
typedef struct gmlp_model gmlp_model;

/* Stable error codes: values never change once released. */
typedef enum gmlp_status {
    GMLP_OK = 0,
    GMLP_ERR_INVALID_ARGUMENT = 1, /* NULL pointer, zero batch, bad option */
    GMLP_ERR_IO = 2,               /* file cannot be opened or read */
    GMLP_ERR_FORMAT = 3,           /* malformed safetensors file or model */
    GMLP_ERR_UNSUPPORTED = 4,      /* valid file, but a model or dtype we cannot run */
    GMLP_ERR_NO_DEVICE = 5,        /* no OpenCL platform, or no device matches */
    GMLP_ERR_OPENCL = 6,           /* an OpenCL call failed */
    GMLP_ERR_BUILD = 7,            /* a kernel failed to compile; see gmlp_last_error */
    GMLP_ERR_HOST_MEMORY = 8,      /* host allocation failed */
    GMLP_ERR_DEVICE_MEMORY = 9,    /* device allocation failed or over the limit */
    GMLP_ERR_WRONG_MODEL = 10,     /* call does not fit the model (e.g. classify a headless model) */
} gmlp_status;

/* Architectures (gmlp_config.arch). */
enum {
    GMLP_ARCH_GMLP = 0,  /* timm MlpMixer with SpatialGatingBlock */
    GMLP_ARCH_MIXER = 1, /* timm MlpMixer with MixerBlock */
    GMLP_ARCH_LM = 2,    /* g-mlp-pytorch gMLP language model */
    GMLP_ARCH_GMLP_VISION = 3, /* g-mlp-pytorch gMLPVision: an image model with heads and tiny attention */
    GMLP_ARCH_GMIXER = 4,      /* timm MlpMixer with MixerBlock and GluMlp (gmixer_*): gated, SiLU */
    GMLP_ARCH_RESMLP = 5,      /* timm ResMLP (resmlp_*): Affine norms, a linear token mix, layer scales */
    GMLP_ARCHS,                /* how many this gmlp.h knows: the values are 0 .. GMLP_ARCHS - 1 */
};

/* Activation on the gate before the multiply (gmlp_config.gate_act):
 * g-mlp-pytorch's `act` (metadata gmlp.act) on the SGU gate; timm gmixer's
 * GluMlp activation (SiLU). */
enum {
    GMLP_GATE_IDENTITY = 0,
    GMLP_GATE_TANH = 1,
    GMLP_GATE_SIGMOID = 2,
    GMLP_GATE_GELU = 3, /* exact (erf) */
    GMLP_GATE_SILU = 4, /* x sigmoid(x) */
    GMLP_GATE_RELU = 5, /* max(x, 0) */
    GMLP_GATES,         /* how many this gmlp.h knows: the values are 0 .. GMLP_GATES - 1 */
};

/* Resampling filters (gmlp_config.interpolation): PIL's, which timm's eval
 * transform uses for every name timm accepts. */
enum {
    GMLP_INTERP_BICUBIC = 0,
    GMLP_INTERP_BILINEAR = 1,
    GMLP_INTERP_NEAREST = 2,
    GMLP_INTERP_BOX = 3,
    GMLP_INTERP_HAMMING = 4,
    GMLP_INTERP_LANCZOS = 5,
};

/* How the eval transform fits an image to img_h x img_w (gmlp_config.crop_mode,
 * timm's pretrained_cfg crop_mode). */
enum {
    GMLP_CROP_CENTER = 0, /* shorter side to size / crop_pct, keeping the aspect ratio, then a centre crop */
    GMLP_CROP_SQUASH = 1, /* both sides to size / crop_pct (aspect ratio not kept), then a centre crop */
    GMLP_CROP_BORDER = 2, /* longer side to size / crop_pct, then crop or pad with the mean colour */
};

/* How a model keeps its weight matrices on the device (gmlp_load_options). */
typedef enum gmlp_weight_type {
    GMLP_WEIGHTS_F32 = 0, /* float */
    GMLP_WEIGHTS_F16 = 1, /* IEEE half: half the memory; arithmetic stays fp32, no cl_khr_fp16 needed.
                             An FP16-precision model stores float weights so (saturated, as its products are) */
    GMLP_WEIGHTS_BF16 = 2, /* bfloat16: half the memory, float's range, 8 significant bits; arithmetic as F16's.
                              A BF16-precision model stores float weights so (what its products round them to) */
} gmlp_weight_type;

/* A model's configuration (gmlp_model_config), and the preprocessing's input
 * (gmlp_preprocess_rgb8).  It grows at the end, as the options structs do:
 * set `size` to sizeof(gmlp_config) before passing one in either direction
 * (gmlp_config_default does, and fills timm's preprocessing defaults for a
 * caller that describes its images by hand).  The library writes and reads
 * only the fields that fit in `size`; a size smaller than this first sized
 * version's is GMLP_ERR_INVALID_ARGUMENT. */
typedef struct gmlp_config {
    size_t size;                             /* sizeof(gmlp_config), set by the caller or gmlp_config_default */
    int arch;                                /* GMLP_ARCH_* */
    int in_chans, img_h, img_w, num_classes; /* num_classes 0: feature extractor */
    int depth, dim, ffn_dim, seq_len;        /* seq_len: number of tokens N */
    float mean[3], std[3];                   /* first in_chans entries used */
    float crop_pct;
    int patch_h, patch_w;   /* patch (= stem kernel = stride) size */
    int token_dim;          /* Mixer token-MLP width (gmixer: fc1's, twice fc2's); gMLP: 0 */
    int interpolation;      /* GMLP_INTERP_* */
    float norm_eps;         /* block and final LayerNorm eps (timm: 1e-6); ResMLP (Affine norms): 0 */
    float sgu_eps;          /* SGU LayerNorm eps (timm: 1e-5); Mixer, ResMLP: 0 */
    size_t num_params;      /* number of weights */
    gmlp_weight_type weights; /* storage of the weight matrices on the device */
    size_t weight_bytes;    /* device memory the weights take */
    /* Language models (GMLP_ARCH_LM) also use seq_len, dim, depth, ffn_dim,
     * norm_eps (block and final LayerNorm) and sgu_eps; image fields are 0. */
    int vocab_size;   /* LM: number of tokens; vision: 0 */
    int heads;        /* SGU heads: contiguous channel blocks, one spatial matrix each (timm: 1; LM, gMLPVision) */
    int attn_dim;     /* aMLP tiny attention width, 0 = none (LM, gMLPVision) */
    int causal;       /* 1: autoregressive (any length n <= seq_len); 0: needs n = seq_len */
    int gate_act;     /* GMLP_GATE_* */
    int shift_tokens; /* g-mlp-pytorch shift_tokens */
    int circulant;    /* spatial weights from the Toeplitz ("circulant") parameterisation */
    int crop_mode;    /* GMLP_CROP_*; vision models */
    int stem_norm;    /* timm's stem_norm=True: the norm (LayerNorm; ResMLP: Affine) on the stem's output */
} gmlp_config;

/* size = sizeof *cfg, every other field 0 but timm's eval defaults for
 * preprocessing: 3 x 224 x 224, mean = std = 0.5, crop_pct 0.875, bicubic,
 * centre crop. */
GMLP_API void gmlp_config_default(gmlp_config *cfg);

GMLP_API const char *gmlp_version(void);
GMLP_API const char *gmlp_status_string(gmlp_status status);

/* The names of the enums gmlp_config holds, as the metadata spells them: an
 * architecture's is gmlp.arch's value ("gmlp", "mixer", "gmlp_lm",
 * "gmlp_vision", "gmixer", "resmlp"), a gate activation's gmlp.act's
 * ("identity", "tanh", "sigmoid", "gelu", "silu").  _name: NULL for a value
 * the library does not know; _named: the value of a name (exact, as _name
 * gives it), or -1. */
GMLP_API const char *gmlp_arch_name(int arch);
GMLP_API int gmlp_arch_named(const char *name);
GMLP_API const char *gmlp_act_name(int act);
GMLP_API int gmlp_act_named(const char *name);

/* device: NULL uses $GMLP_DEVICE, else the first GPU, else the first device.
 * Accepted: an index in gmlp_list_devices order, "gpu", "cpu", or a
 * case-insensitive substring of the platform, device or vendor name. */
GMLP_API gmlp_status gmlp_context_create(const char *device, gmlp_context **out);
GMLP_API void gmlp_context_destroy(gmlp_context *ctx);

/* Where float GEMMs run (GEMMs with half weights always use the library's kernel). */
typedef enum gmlp_gemm_backend {
    GMLP_GEMM_AUTO = 0,    /* $GMLP_GEMM ("kernel" or "clblast") if set, else GMLP_GEMM_KERNEL */
    GMLP_GEMM_KERNEL = 1,  /* the library's kernel, bias/GELU/gating fused into it; no CLBlast compile */
    GMLP_GEMM_CLBLAST = 2, /* CLBlast, then the fused steps as a kernel of their own (the reference path);
                            * GMLP_ERR_UNSUPPORTED at context creation in a library built without it */
} gmlp_gemm_backend;

/* Diagnostics the library may write (gmlp_context_options.log_level, gmlp_set_log). */
typedef enum gmlp_log_level {
    GMLP_LOG_AUTO = -1, /* $GMLP_LOG: unset or "0" none; "error", "info" or "debug"; any other value (e.g. "1") debug */
    GMLP_LOG_NONE = 0,
    GMLP_LOG_ERROR = 1, /* every failure's message, as gmlp_last_error gives it */
    GMLP_LOG_INFO = 2,  /* also what the library chose: kernel variants, cache hits and misses */
    GMLP_LOG_DEBUG = 3,
} gmlp_log_level;

/* Receives each message of at most the configured level (one line, no
 * newline); called on the thread that made the call, never concurrently for
 * one context.  NULL: messages go to stderr as "gmlp: MESSAGE". */
typedef void (*gmlp_log_callback)(void *user, gmlp_log_level level, const char *message);

/* Options for creating a context.  Fields left at their default take the
 * environment's value where one is named, else the built-in default. */
typedef struct gmlp_context_options {
    size_t size;                /* sizeof(gmlp_context_options), set by _default() */
    const char *device;         /* as gmlp_context_create's argument; NULL: $GMLP_DEVICE, else the first GPU */
    gmlp_gemm_backend gemm;     /* GMLP_GEMM_AUTO: $GMLP_GEMM, else the kernel */
    const char *cache_dir;      /* compiled kernels (not PoCL's: PoCL caches its own) and tuning files; NULL:
                                 * $GMLP_CACHE_DIR, else $XDG_CACHE_HOME/gmlp, else ~/.cache/gmlp, else (Windows)
                                 * %LOCALAPPDATA%/gmlp; "": none */
    gmlp_log_level log_level;   /* GMLP_LOG_AUTO: $GMLP_LOG */
    gmlp_log_callback log;      /* NULL: stderr */
    void *log_user;             /* passed to log */
    size_t device_memory_limit; /* bytes the library's buffers may take; 0: $GMLP_DEVICE_MEMORY_LIMIT
                                 * (k/M/G suffixes), else none; SIZE_MAX: none, whatever the environment */
    const char *cl_options;     /* appended to every kernel build; NULL: $GMLP_CL_OPTIONS */
    int profiling;              /* nonzero: time every kernel with queue profiling (gmlp_diag.h) */
} gmlp_context_options;

GMLP_API void gmlp_context_options_default(gmlp_context_options *opts);
/* gmlp_context_create with options; opts NULL means the defaults, an unknown
 * value (in opts or in the environment) is GMLP_ERR_INVALID_ARGUMENT.  Both
 * report into gmlp_last_error(NULL). */
GMLP_API gmlp_status gmlp_context_create_ex(const gmlp_context_options *opts, gmlp_context **out);
/* The backend a context chose (never GMLP_GEMM_AUTO).  GMLP_GEMM_KERNEL where
 * none was asked for, even when the device's tuning file (gmlp_tune,
 * gmlp_diag.h) sends some shapes to CLBlast: it names the default, not every
 * GEMM's backend. */
GMLP_API gmlp_gemm_backend gmlp_context_gemm(const gmlp_context *ctx);

/* Detail of the last failure on ctx, never NULL; with ctx == NULL, the calling
 * thread's last failure that had no context (e.g. gmlp_context_create).  For a
 * context it is a copy, valid until the calling thread's next gmlp_last_error,
 * taken under the context's lock: it waits for a call running on ctx, so ctx's
 * log callback (which is given the message) must not call it. */
GMLP_API const char *gmlp_last_error(const gmlp_context *ctx);

/* Where the calls without a context (context creation, device listing and
 * report, preprocessing, sampling) log, process-wide; a context logs as its
 * options say.  Default: GMLP_LOG_AUTO to stderr. */
GMLP_API void gmlp_set_log(gmlp_log_level level, gmlp_log_callback log, void *user);

/* One line per device, in selection-index order, written into buf (always
 * NUL-terminated when size > 0).  Returns the length the full text needs
 * (excluding NUL), or 0 with gmlp_last_error(NULL) set when there is no
 * OpenCL platform. */
GMLP_API size_t gmlp_list_devices(char *buf, size_t size);

/* What the library makes of one device (device as for gmlp_context_create):
 * its gmlp_list_devices line, its limits, and whether each of the library's
 * kernels builds there, with the reason when one does not.  Builds every
 * kernel: slow the first time on a device and driver, then the kernel cache
 * serves them.  Written into buf as gmlp_list_devices does; returns the
 * length the full text needs, or 0 with gmlp_last_error(NULL) set when no
 * device matches. */
GMLP_API size_t gmlp_device_report(const char *device, char *buf, size_t size);

/* Name of the device a context runs on. */
GMLP_API const char *gmlp_context_device_name(const gmlp_context *ctx);

/* path: a .safetensors file, or a model folder holding model.safetensors and
 * (optionally) config.json, timm's layout: pretrained_cfg's input_size, mean,
 * std, crop_pct, crop_mode and interpolation, and label_names (at the top or
 * in pretrained_cfg), are the model's preprocessing where the file's gmlp.*
 * metadata does not set them.  A config.json that does not parse, has a value
 * of the wrong type, or contradicts the weights (num_classes, the number of
 * label_names, input_size's channels or a size the spatial weights do not
 * fit) is GMLP_ERR_FORMAT naming the key; a folder without model.safetensors
 * is GMLP_ERR_IO saying what was looked for, or GMLP_ERR_UNSUPPORTED when it
 * holds PyTorch weights (.bin, .pth: convert them with tools/export_vision.py).
 * A file that is not safetensors is GMLP_ERR_FORMAT, "not a safetensors file".
 * Messages start with the path. */
GMLP_API gmlp_status gmlp_model_load(gmlp_context *ctx, const char *path, gmlp_model **out);
/* The same from a safetensors file already in memory (data is not kept; no
 * config.json: the metadata, else the defaults). */
GMLP_API gmlp_status gmlp_model_load_memory(gmlp_context *ctx, const void *data, size_t size, gmlp_model **out);

/* The precision modes: the format every GEMM of a forward (the head and the
 * tiny attention included, as PyTorch's autocast) rounds both operands to,
 * round to nearest even, before multiplying them; products accumulate in
 * fp32, and bias, activations, the gate, residuals, LayerNorm and softmax
 * stay fp32.  The same numbers on every device, within accumulation order:
 * a matrix engine (NVIDIA's tensor cores) where the device has one, else the
 * portable kernels, which round as they load.  README "Precision" gives the
 * measured error of each. */
typedef enum gmlp_precision {
    GMLP_PRECISION_AUTO = 0, /* $GMLP_PRECISION (fp32, tf32, fp16 or bf16) if set, else FP32 */
    GMLP_PRECISION_FP32 = 1, /* no rounding: the library's exactness */
    GMLP_PRECISION_TF32 = 2, /* 10 mantissa bits, fp32's range (PyTorch's allow_tf32) */
    GMLP_PRECISION_FP16 = 3, /* IEEE half: saturates at +-65504, NaN stays NaN */
    GMLP_PRECISION_BF16 = 4, /* bfloat16: 7 mantissa bits, fp32's range */
} gmlp_precision;

/* "fp32", "tf32", "fp16", "bf16" (and "auto"); NULL for an unknown mode. */
GMLP_API const char *gmlp_precision_name(gmlp_precision mode);
/* The mode a name (as gmlp_precision_name gives, any case) stands for:
 * GMLP_ERR_INVALID_ARGUMENT for anything else. */
GMLP_API gmlp_status gmlp_precision_parse(const char *name, gmlp_precision *mode);

/* Options for loading; fill with gmlp_load_options_default, then change. */
typedef struct gmlp_load_options {
    size_t size; /* sizeof(gmlp_load_options), set by _default() */
    /* GMLP_WEIGHTS_F32 (default), GMLP_WEIGHTS_F16 or GMLP_WEIGHTS_BF16: the
     * weight matrices (not biases and LayerNorm parameters) rounded to the
     * nearest half or bfloat16.  A weight beyond half's range (|w| >= 65520)
     * is GMLP_ERR_UNSUPPORTED, but with precision FP16, whose products
     * saturate it at 65504 anyway.  With precision BF16, F32 means BF16, and
     * with FP16, F16: every product rounds the weights so anyway
     * (gmlp_config.weights says what is stored). */
    gmlp_weight_type weights;
    /* GMLP_PRECISION_AUTO (default): $GMLP_PRECISION, else FP32.  A mode
     * other than FP32 with GMLP_GEMM=clblast is GMLP_ERR_UNSUPPORTED. */
    gmlp_precision precision;
} gmlp_load_options;

GMLP_API void gmlp_load_options_default(gmlp_load_options *opts);
/* gmlp_model_load / _memory with options; opts NULL means the defaults, an
 * unknown option value is GMLP_ERR_INVALID_ARGUMENT. */
GMLP_API gmlp_status gmlp_model_load_ex(gmlp_context *ctx, const char *path, const gmlp_load_options *opts,
                                        gmlp_model **out);
GMLP_API gmlp_status gmlp_model_load_memory_ex(gmlp_context *ctx, const void *data, size_t size,
                                               const gmlp_load_options *opts, gmlp_model **out);
GMLP_API void gmlp_model_free(gmlp_model *model);
/* The precision mode in force (*mode), and what runs the model's large
 * products in it (engine, size bytes, may be NULL): "portable" (the
 * library's kernels), "CLBlast", or a matrix engine's instruction
 * ("mma.sync m16n8k8"). */
GMLP_API gmlp_status gmlp_model_precision(const gmlp_model *model, gmlp_precision *mode, char *engine, size_t size);
/* The model's configuration into *out, whose size the caller set (the fields
 * that fit in out->size are written; out->size stays). */
GMLP_API gmlp_status gmlp_model_config(const gmlp_model *model, gmlp_config *out);
/* A __metadata__ value of the file, NULL if absent.  Valid until gmlp_model_free. */
GMLP_API const char *gmlp_model_metadata(const gmlp_model *model, const char *key);
/* The i-th metadata key (0-based) or NULL past the end; for listing all keys. */
GMLP_API const char *gmlp_model_metadata_key(const gmlp_model *model, size_t i);
/* Class names: the i-th label (gmlp.labels, a model folder's config.json, or
 * gmlp_model_override), NULL if absent or out of range.  Valid until the
 * labels are overridden or the model is freed. */
GMLP_API const char *gmlp_model_label(const gmlp_model *model, int i);

/* Where a preprocessing value of a model came from. */
typedef enum gmlp_source {
    GMLP_SOURCE_UNKNOWN = -1,    /* not a key below, or model NULL */
    GMLP_SOURCE_DEFAULT = 0,     /* the architecture's default (timm's: mean = std = 0.5, bicubic, 0.875) */
    GMLP_SOURCE_METADATA = 1,    /* the file's gmlp.* metadata */
    GMLP_SOURCE_CONFIG_JSON = 2, /* config.json of a model folder (pretrained_cfg, label_names) */
    GMLP_SOURCE_USER = 3,        /* gmlp_model_override */
} gmlp_source;

/* The source of "img_size", "mean", "std", "crop_pct", "crop_mode",
 * "interpolation" or "labels". */
GMLP_API gmlp_source gmlp_model_config_source(const gmlp_model *model, const char *key);

/* When the file's gmlp.KEY metadata and a model folder's config.json both
 * give key (as for gmlp_model_config_source) and disagree: a short text
 * naming both values (the metadata's is used), e.g. "gmlp.mean '0.5,0.5,0.5'
 * (used) and config.json pretrained_cfg.mean '0,0,0' differ".  NULL when
 * they agree, when either is absent, or for an unknown key.  Valid until
 * gmlp_model_free; a later gmlp_model_override does not change it. */
GMLP_API const char *gmlp_model_config_conflict(const gmlp_model *model, const char *key);

/* Replaces a preprocessing value, written as the gmlp.KEY metadata would be
 * (keys as for gmlp_model_config_source; "labels": newline-separated, one per
 * class; "crop_mode": "center", "squash" or "border"); later
 * gmlp_model_config calls return it and its source becomes GMLP_SOURCE_USER.
 * A malformed value, or one the weights contradict (label count, image size
 * of a fixed-size model), is GMLP_ERR_INVALID_ARGUMENT naming the key. */
GMLP_API gmlp_status gmlp_model_override(gmlp_model *model, const char *key, const char *value);

/* images: batch x in_chans x img_h x img_w floats, NCHW, already normalised.
 * logits: batch x num_classes.  features: batch x dim, pooled (after the final
 * LayerNorm, before the head: timm's forward_head(pre_logits=True)).  Any
 * batch size: large ones run in chunks. */
GMLP_API gmlp_status gmlp_classify(gmlp_model *model, const float *images, size_t batch, float *logits);
GMLP_API gmlp_status gmlp_features(gmlp_model *model, const float *images, size_t batch, float *features);
/* Both from one forward: the logits and the pooled features of the same
 * images, each as gmlp_classify and gmlp_features give them, bit for bit.
 * Either output may be NULL (not both); logits on a headless model is
 * GMLP_ERR_WRONG_MODEL. */
GMLP_API gmlp_status gmlp_classify_features(gmlp_model *model, const float *images, size_t batch, float *logits,
                                            float *features);

/* timm's eval transform for one 8-bit image (interleaved, row-major,
 * channels 1 grey, 2 grey+alpha, 3 RGB or 4 RGBA) into out: in_chans x img_h x img_w floats, normalised
 * with the model's mean/std.  Grey is repeated to RGB or RGB is converted to
 * grey (ITU-R 601-2 luma, as PIL's convert("L")) when the model needs it.
 * Resize (PIL resampling with antialiasing) and crop to img_h x img_w by
 * cfg->crop_mode as timm's eval transform: GMLP_CROP_CENTER, the shorter side
 * to floor(size / crop_pct) keeping the aspect ratio, then a centre crop;
 * _SQUASH, both sides to floor(size / crop_pct), then a centre crop; _BORDER,
 * the longer side to floor(size / crop_pct), then a centre crop or padding
 * with the mean colour (an image whose other side then rounds to 0 pixels is
 * GMLP_ERR_INVALID_ARGUMENT: PIL refuses that resize, so timm fails on it).
 * cfg: usually from gmlp_model_config.  Errors: gmlp_last_error(NULL). */
GMLP_API gmlp_status gmlp_preprocess_rgb8(const gmlp_config *cfg, const uint8_t *pixels, int width, int height,
                                          int channels, float *out);
/* The same for n images, one after the other into out (n x in_chans x img_h x
 * img_w): the input of gmlp_classify.  Stops at the first image that fails,
 * naming its index (gmlp_last_error(NULL)). */
GMLP_API gmlp_status gmlp_preprocess_rgb8_batch(const gmlp_config *cfg, const uint8_t *const *pixels, const int *width,
                                                const int *height, const int *channels, size_t n, float *out);

/* The k most probable classes of one row of n logits: index[0..k) in
 * descending order of probability (ties: the lower index first) and their
 * softmax probabilities prob[0..k) (prob may be NULL).  1 <= k <= n; a NaN
 * logit is GMLP_ERR_INVALID_ARGUMENT (gmlp_last_error(NULL)). */
GMLP_API gmlp_status gmlp_softmax_topk(const float *logits, int n, int k, int32_t *index, float *prob);

/* ---- Language models (g-mlp-pytorch gMLP with num_tokens) ----
 * Loaded with gmlp_model_load like the vision models.  Token ids are
 * 0 .. vocab_size-1; a model with vocab_size 256 is byte-level (token = byte). */

/* tokens: batch x n; logits: batch x n x vocab_size.  Causal models accept any
 * 1 <= n <= seq_len; bidirectional ones need n == seq_len. */
GMLP_API gmlp_status gmlp_lm_logits(gmlp_model *model, const int32_t *tokens, size_t batch, size_t n, float *logits);

/* Cached incremental decoding for causal models.  A state holds, per layer,
 * what earlier positions produced (normalised gate inputs, the tiny
 * attention's keys/values, the rows token shift reads), so each new token
 * costs O(n * ffn_dim) per layer.  Past seq_len tokens the spatial weights run
 * out (they are tied to absolute positions): the state then keeps a window of
 * the last seq_len tokens and recomputes it in full for every new token, as
 * g-mlp-pytorch's AutoregressiveWrapper does. */
typedef struct gmlp_lm_state gmlp_lm_state;
GMLP_API gmlp_status gmlp_lm_state_create(gmlp_model *model, size_t batch, gmlp_lm_state **out);
/* Feeds one token per sequence (tokens: batch); logits: batch x vocab_size
 * for that position (NULL: not wanted). */
GMLP_API gmlp_status gmlp_lm_step(gmlp_lm_state *state, const int32_t *tokens, float *logits);
/* Feeds n tokens per sequence at once (tokens: batch x n, e.g. a prompt);
 * logits: batch x vocab_size for the last of them, or NULL. */
GMLP_API gmlp_status gmlp_lm_feed(gmlp_lm_state *state, const int32_t *tokens, size_t n, float *logits);
/* Tokens fed since creation or the last reset. */
GMLP_API size_t gmlp_lm_state_tokens(const gmlp_lm_state *state);
GMLP_API void gmlp_lm_state_reset(gmlp_lm_state *state);
GMLP_API void gmlp_lm_state_free(gmlp_lm_state *state);

/* Called with each generated token; return nonzero to stop generating. */
typedef int (*gmlp_token_callback)(void *user, int32_t token);

/* The largest gmlp_generate_options.temperature (gmlp-generate's and the server's too). */
#define GMLP_TEMPERATURE_MAX 1e6

typedef struct gmlp_generate_options {
    size_t size;                 /* sizeof(gmlp_generate_options), set by _default() */
    float temperature;           /* <= 0: greedy (the most likely token); at most GMLP_TEMPERATURE_MAX */
    int top_k;                   /* sample among the k most likely; 0: all */
    float top_p;                 /* nucleus: smallest set with probability >= top_p; 1: all */
    uint64_t seed;               /* same seed, same model, same options: same tokens */
    size_t max_tokens;           /* tokens to generate at most */
    const int32_t *stop_tokens;  /* generation ends after producing one of these */
    size_t n_stop_tokens;
    gmlp_token_callback on_token; /* streaming; NULL for none */
    void *user;
} gmlp_generate_options;

/* temperature 1, top_k 0, top_p 1, seed 0, max_tokens 256, no stop tokens. */
GMLP_API void gmlp_generate_options_default(gmlp_generate_options *opts);

/* Continues prompt (n_prompt >= 1 tokens) with up to opts->max_tokens tokens
 * into out (room for max_tokens); *n_out: how many were produced. */
GMLP_API gmlp_status gmlp_lm_generate(gmlp_model *model, const int32_t *prompt, size_t n_prompt,
                                      const gmlp_generate_options *opts, int32_t *out, size_t *n_out);

/* One token from logits (vocab entries) under opts' temperature, top_k and
 * top_p; *rng is the generator state (start it from a seed), advanced by one
 * draw.  Deterministic and device-free; errors: gmlp_last_error(NULL). */
GMLP_API gmlp_status gmlp_sample(const float *logits, int vocab, const gmlp_generate_options *opts, uint64_t *rng,
                                 int32_t *token);

#ifdef __cplusplus
}
#endif

#endif
