/* What the steps of gmlp_config_infer (config*.c, lm_config.c) share: value
 * parsing, the size helpers and each step's entry point. */
#ifndef GMLP_CONFIG_H
#define GMLP_CONFIG_H

#include "model/model.h"

#define GMLP_MAX_DIM (1 << 20) /* keeps every size product far from overflow */

/* ---- metadata values (config_parse.c) ---- */

/* A strict decimal: the whole string, finite; 0 if malformed. */
int gmlp_parse_double(const char *s, double *out);
int gmlp_parse_float(const char *s, float *out);
/* Comma-separated decimals; the count, or -1 if malformed or more than max. */
int gmlp_parse_doubles(const char *s, double *out, int max);
/* A count at the start of s: decimal digits alone (no sign, space, point
 * or exponent), at most max (max < LONG_MAX / 10), into *out; past its
 * last digit, or NULL. */
const char *gmlp_parse_digits(const char *s, long max, long *out);
/* "S" or "H,W", positive integers (digits only) up to GMLP_MAX_DIM, into hw; 0 if malformed. */
int gmlp_parse_size(const char *s, int hw[2]);
/* Index of s in the NULL-terminated names, or -1. */
int gmlp_cfg_choice(const char *s, const char *const *names);
/* The NULL-terminated names as a message lists the choices ("a, b or c") in buf (size > 0; cut short to
 * fit); buf. */
const char *gmlp_cfg_choices(const char *const *names, char *buf, size_t size);
/* gmlp.norm_eps / gmlp.sgu_eps over the architecture's defaults. */
gmlp_status gmlp_cfg_parse_eps(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err);

/* ---- which architecture (config_arch.c) ---- */

/* cfg->arch from gmlp.arch and the tensor names, which must agree. */
gmlp_status gmlp_cfg_infer_arch(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err);
/* config.json's architecture name (hf->architecture, may be NULL), if it
 * names a family, must name cfg's. */
gmlp_status gmlp_cfg_check_hf_arch(const gmlp_hf_config *hf, const gmlp_config *cfg, gmlp_error *err);

/* ---- sizes from the tensors' shapes (config_sizes.c, lm_config.c) ---- */

/* Tensor leaf of block l (the model's when l < 0), which must have ndim
 * dimensions; NULL, failed, otherwise. */
const gmlp_st_tensor *gmlp_cfg_need(const gmlp_st_file *f, const gmlp_config *cfg, int l, const char *leaf, int ndim,
                                    gmlp_error *err);
gmlp_status gmlp_cfg_check_dim(long long v, const char *what, const char *tensor, gmlp_error *err);
/* 1 + the largest N of tensors named PREFIX N.* */
int gmlp_cfg_count_blocks(const gmlp_st_file *f, const char *prefix);
/* The architectures' entries (gmlp_arch_desc.infer): timm's MlpMixer family,
 * g-mlp-pytorch's gMLPVision and its LM (all of the LM's config). */
gmlp_status gmlp_timm_config_infer(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err);
gmlp_status gmlp_vision_config_infer(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err);
gmlp_status gmlp_lm_config_infer(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err);
/* g-mlp-pytorch's layers (LM and gMLPVision; dim already set): depth,
 * ffn_dim, heads, seq_len, the circulant form and attn_dim from the shapes. */
gmlp_status gmlp_layers_config_infer(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err);

/* ---- an image model's preprocessing (config_preproc.c) ---- */

/* The image size, then the other values: the architecture's defaults,
 * config.json's values, the gmlp.* metadata's, each over the one before. */
gmlp_status gmlp_cfg_infer_preproc(const gmlp_st_file *f, const gmlp_hf_config *hf, gmlp_config *cfg,
                                   gmlp_error *err);
/* gmlp.labels and config.json's names, if any, name each class once. */
gmlp_status gmlp_cfg_check_labels(const gmlp_st_file *f, const gmlp_hf_config *hf, const gmlp_config *cfg,
                                  gmlp_error *err);

#endif
