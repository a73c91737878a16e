/* The layout of the gmlp.h structs and the enum values that the Python
 * binding mirrors (python/gmlp/_lib.py), as the C compiler sees them (the
 * names of the enums the library has tables for, as the library gives them),
 * for test_layout.py:
 *   struct NAME SIZE
 *   field STRUCT NAME OFFSET SIZE
 *   enum KIND NAME VALUE */
#include <gmlp.h>
#include <stddef.h>
#include <stdio.h>

#define STRUCT(s) printf("struct %s %zu\n", #s, sizeof(s))
#define FIELD(s, f) printf("field %s %s %zu %zu\n", #s, #f, offsetof(s, f), sizeof(((s *)0)->f))
#define ENUM(kind, name, value) printf("enum %s %s %d\n", kind, name, (int)(value))

int main(void)
{
    STRUCT(gmlp_config);
    FIELD(gmlp_config, size);
    FIELD(gmlp_config, arch);
    FIELD(gmlp_config, in_chans);
    FIELD(gmlp_config, img_h);
    FIELD(gmlp_config, img_w);
    FIELD(gmlp_config, num_classes);
    FIELD(gmlp_config, depth);
    FIELD(gmlp_config, dim);
    FIELD(gmlp_config, ffn_dim);
    FIELD(gmlp_config, seq_len);
    FIELD(gmlp_config, mean);
    FIELD(gmlp_config, std);
    FIELD(gmlp_config, crop_pct);
    FIELD(gmlp_config, patch_h);
    FIELD(gmlp_config, patch_w);
    FIELD(gmlp_config, token_dim);
    FIELD(gmlp_config, interpolation);
    FIELD(gmlp_config, norm_eps);
    FIELD(gmlp_config, sgu_eps);
    FIELD(gmlp_config, num_params);
    FIELD(gmlp_config, weights);
    FIELD(gmlp_config, weight_bytes);
    FIELD(gmlp_config, vocab_size);
    FIELD(gmlp_config, heads);
    FIELD(gmlp_config, attn_dim);
    FIELD(gmlp_config, causal);
    FIELD(gmlp_config, gate_act);
    FIELD(gmlp_config, shift_tokens);
    FIELD(gmlp_config, circulant);
    FIELD(gmlp_config, crop_mode);
    FIELD(gmlp_config, stem_norm);

    STRUCT(gmlp_load_options);
    FIELD(gmlp_load_options, size);
    FIELD(gmlp_load_options, weights);
    FIELD(gmlp_load_options, precision);

    STRUCT(gmlp_generate_options);
    FIELD(gmlp_generate_options, size);
    FIELD(gmlp_generate_options, temperature);
    FIELD(gmlp_generate_options, top_k);
    FIELD(gmlp_generate_options, top_p);
    FIELD(gmlp_generate_options, seed);
    FIELD(gmlp_generate_options, max_tokens);
    FIELD(gmlp_generate_options, stop_tokens);
    FIELD(gmlp_generate_options, n_stop_tokens);
    FIELD(gmlp_generate_options, on_token);
    FIELD(gmlp_generate_options, user);

    ENUM("status", "OK", GMLP_OK);
    ENUM("status", "INVALID_ARGUMENT", GMLP_ERR_INVALID_ARGUMENT);
    ENUM("status", "IO", GMLP_ERR_IO);
    ENUM("status", "FORMAT", GMLP_ERR_FORMAT);
    ENUM("status", "UNSUPPORTED", GMLP_ERR_UNSUPPORTED);
    ENUM("status", "NO_DEVICE", GMLP_ERR_NO_DEVICE);
    ENUM("status", "OPENCL", GMLP_ERR_OPENCL);
    ENUM("status", "BUILD", GMLP_ERR_BUILD);
    ENUM("status", "HOST_MEMORY", GMLP_ERR_HOST_MEMORY);
    ENUM("status", "DEVICE_MEMORY", GMLP_ERR_DEVICE_MEMORY);
    ENUM("status", "WRONG_MODEL", GMLP_ERR_WRONG_MODEL);
    for (int a = 0; a < GMLP_ARCHS; a++) /* the names are the library's tables' */
        ENUM("arch", gmlp_arch_name(a), a);
    ENUM("interpolation", "bicubic", GMLP_INTERP_BICUBIC);
    ENUM("interpolation", "bilinear", GMLP_INTERP_BILINEAR);
    ENUM("interpolation", "nearest", GMLP_INTERP_NEAREST);
    ENUM("interpolation", "box", GMLP_INTERP_BOX);
    ENUM("interpolation", "hamming", GMLP_INTERP_HAMMING);
    ENUM("interpolation", "lanczos", GMLP_INTERP_LANCZOS);
    ENUM("crop_mode", "center", GMLP_CROP_CENTER);
    ENUM("crop_mode", "squash", GMLP_CROP_SQUASH);
    ENUM("crop_mode", "border", GMLP_CROP_BORDER);
    for (int a = 0; a < GMLP_GATES; a++)
        ENUM("gate_act", gmlp_act_name(a), a);
    ENUM("weights", "f32", GMLP_WEIGHTS_F32);
    ENUM("weights", "f16", GMLP_WEIGHTS_F16);
    ENUM("weights", "bf16", GMLP_WEIGHTS_BF16);
    return 0;
}
