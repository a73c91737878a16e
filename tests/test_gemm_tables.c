/* The GEMM engine's tables (lib/ops/gemm_tilings.c) alone, no device: every
 * tiling's name spells its numbers and is unique, its blocks divide its
 * tiles; every default row names known tilings, says what chose it, and the
 * last one takes any product; lookups give what the rows say for made-up
 * CPUs, NVIDIA GPUs and other GPUs (the first matching row wins); split-K:
 * the batch-1 products of a big GPU split, a CPU's and big batches' not.
 * The variants' axes: their plan keys one per keyed combination, within
 * GMLP_GEMM_VARIANT_KEYS; each axis's defines and labels those its values
 * say; the engines' bits distinct, in order, below EMULATED.  Packing:
 * a CPU packs its linear weights, BF16's as pairs along k where it has AVX512_BF16. */
#include <string.h>

#include "check.h"
#include "ops/gemm_variant.h"
#include "ops/ops.h"

static gmlp_devinfo device(cl_device_type type, gmlp_vendor vendor)
{
    return (gmlp_devinfo){.type = type, .vendor_id = vendor, .compute_units = 8, .local_mem = 65536,
                          .max_wg = 1024, .max_wi = {1024, 1024, 64}};
}

static void check_tilings(void)
{
    size_t n;
    const gmlp_tiling *all = gmlp_gemm_tilings(&n);
    CHECK(n >= 10, "%zu tilings", n);
    for (const gmlp_tiling *t = all; t < all + n; t++) {
        char want[64];
        if (gmlp_tiling_direct(t)) /* an engine's: its prefix for "direct" */
            snprintf(want, sizeof want, "%s_%dx%d_%dx%d_v%d", t->needs ? gmlp_engine_of(t->needs)->prefix : "direct",
                     t->tm, t->tn, t->wm, t->wn, t->vw);
        else {
            char stages[16] = "";
            if (t->stages)
                snprintf(stages, sizeof stages, "_s%d", t->stages);
            char raster[16] = "";
            if (t->raster)
                snprintf(raster, sizeof raster, "_r%d", t->raster);
            snprintf(want, sizeof want, "%s_%dx%dx%d_%dx%d%s%s%s%s%s", t->needs ? gmlp_engine_of(t->needs)->prefix : "tiled",
                     t->tm, t->tn, t->tk, t->wm, t->wn, stages, t->ldsm ? "_ldsm" : "", t->swizzle ? "_swz" : "",
                     t->frag2 ? "_f2" : "", raster);
        }
        CHECK(!strcmp(t->name, want), "tiling %s spells %s", t->name, want);
        CHECK(gmlp_gemm_tiling_named(t->name) == t, "%s found by its name, once", t->name);
        CHECK(t->tm % t->wm == 0 && t->tn % t->wn == 0 && t->tk >= 1 && t->wn % (gmlp_tiling_direct(t) ? t->vw : 1) == 0,
              "%s: blocks divide tiles", t->name);
        /* portable tilings run every precision; a matrix engine's (one engine),
         * low ones its instructions run, each named */
        const gmlp_engine *e = gmlp_engine_of(t->needs);
        CHECK(t->needs ? e && e->bit == t->needs && t->precisions && !(t->precisions & ~GMLP_GEMM_LOW_PRECISIONS)
                       : !t->precisions && !t->subgroup && !t->defines,
              "%s: precisions %#x for engines %#x", t->name, t->precisions, t->needs);
        for (int p = GMLP_GEMM_FP32; p < GMLP_GEMM_PRECISIONS; p++) {
            const char *name = gmlp_gemm_tiling_engine(t, (gmlp_gemm_precision)p);
            CHECK(!gmlp_gemm_tiling_runs(t, (gmlp_gemm_precision)p) || !e ? !strcmp(name, "portable")
                                                                          : e->op[p] && !strcmp(name, e->op[p]),
                  "%s in %s: engine '%s'", t->name, gmlp_gemm_precision_name((gmlp_gemm_precision)p), name);
        }
        CHECK(gmlp_tiling_direct(t) == (gmlp_gemm_tiling_local_bytes(t) == 0), "%s: local memory iff tiled", t->name);
    }
    CHECK(!gmlp_gemm_tiling_named("tiled_96x64x8_4x4") && !gmlp_gemm_tiling_named(NULL), "unknown names: none");
}

/* The first tiling of the default row for this product on d. */
static const char *first(const gmlp_devinfo *d, gmlp_gemm_size size, gmlp_gemm_form form)
{
    const gmlp_gemm_default *fallback, *row = gmlp_gemm_default_for(d, size, form, GMLP_GEMM_FP32, &fallback);
    CHECK(row && fallback && row->measured && fallback->size == GMLP_GEMM_ANY_SIZE &&
              fallback->form == GMLP_FORM_ANY && !fallback->devices && fallback->vendor == GMLP_VENDOR_ANY,
          "a row, and the fallback that takes anything");
    for (size_t i = 0; i < GMLP_GEMM_ROW_TILINGS && row->tilings[i]; i++)
        CHECK(gmlp_gemm_tiling_named(row->tilings[i]) != NULL, "row names known tiling %s", row->tilings[i]);
    return row->tilings[0] ? row->tilings[0] : "";
}

static void check_defaults(void)
{
    const gmlp_devinfo cpu = device(CL_DEVICE_TYPE_CPU, GMLP_VENDOR_INTEL),
                       nvidia = device(CL_DEVICE_TYPE_GPU, GMLP_VENDOR_NVIDIA),
                       amd = device(CL_DEVICE_TYPE_GPU, GMLP_VENDOR_AMD),
                       other = device(CL_DEVICE_TYPE_ACCELERATOR, GMLP_VENDOR_ANY);
    struct {
        const gmlp_devinfo *d;
        gmlp_gemm_size size;
        gmlp_gemm_form form;
        const char *want;
    } cases[] = {
        {&cpu, GMLP_GEMM_NARROW, GMLP_FORM_NT, "direct_4x64_1x32_v8"},
        {&cpu, GMLP_GEMM_LARGE, GMLP_FORM_NT, "direct_16x32_4x16_v8"},
        {&cpu, GMLP_GEMM_SMALL, GMLP_FORM_NN, "direct_24x64_6x32_v16"}, /* on AVX-512, else the next */
        {&cpu, GMLP_GEMM_SMALL, GMLP_FORM_TT, "direct_24x64_6x32_v16"},
        {&nvidia, GMLP_GEMM_LARGE, GMLP_FORM_NN, "tiled_32x64x8_4x4"},
        {&nvidia, GMLP_GEMM_LARGE, GMLP_FORM_NT, "tiled_128x128x8_8x8"},
        {&nvidia, GMLP_GEMM_SMALL, GMLP_FORM_NN, "tiled_16x16x16_2x2"},
        {&nvidia, GMLP_GEMM_NARROW, GMLP_FORM_NT, "tiled_16x16x16_2x2"},
        {&nvidia, GMLP_GEMM_NARROW, GMLP_FORM_NN, "tiled_16x16x4_4x4"},
        {&amd, GMLP_GEMM_LARGE, GMLP_FORM_NN, "tiled_128x128x8_8x8"}, /* which does not fit AMD: the next */
        {&amd, GMLP_GEMM_DEEP, GMLP_FORM_TN, "tiled_16x16x16_2x2"},
        {&amd, GMLP_GEMM_SMALL, GMLP_FORM_NT, "tiled_64x64x8_4x4"},
        {&other, GMLP_GEMM_LARGE, GMLP_FORM_NT, "tiled_64x64x8_4x4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *got = first(cases[i].d, cases[i].size, cases[i].form);
        CHECK(!strcmp(got, cases[i].want), "case %zu: %s, want %s", i, got, cases[i].want);
    }
    const gmlp_tiling *deep8 = gmlp_gemm_tiling_named("tiled_128x128x8_8x8");
    CHECK(deep8 && gmlp_gemm_tiling_fits(&nvidia, deep8) && !gmlp_gemm_tiling_fits(&amd, deep8) &&
              !gmlp_gemm_tiling_fits(&cpu, deep8),
          "NVIDIA's 8-deep large tiles fit NVIDIA GPUs only");
    const gmlp_tiling *block = gmlp_gemm_tiling_named("direct_24x32_6x16_v8");
    CHECK(block && gmlp_gemm_tiling_fits(&cpu, block) && !gmlp_gemm_tiling_fits(&amd, block), "CPU blocks on CPUs only");
    const gmlp_tiling *wide = gmlp_gemm_tiling_named("direct_24x64_6x32_v16");
    gmlp_devinfo avx2 = cpu, avx512 = cpu;
    avx2.native_floats = 8;
    avx512.native_floats = 16;
    CHECK(wide && wide->native_vw && gmlp_gemm_tiling_fits(&avx512, wide) && !gmlp_gemm_tiling_fits(&avx2, wide) &&
              gmlp_gemm_tiling_fits(&avx2, block),
          "the 16-wide block where native float vectors are 16 wide; the 8-wide one on AVX2 too");
    gmlp_devinfo small = amd;
    small.max_wg = 64; /* 8 x 8 work-items of the 64 x 64 tiles, not the 16 x 16 of the large */
    const gmlp_tiling *t64 = gmlp_gemm_tiling_named("tiled_64x64x8_4x4"), *t128 = gmlp_gemm_tiling_named("tiled_128x128x2_8x8");
    CHECK(t64 && t128 && !gmlp_gemm_tiling_fits(&small, t64) && !gmlp_gemm_tiling_fits(&small, t128) &&
              gmlp_gemm_tiling_fits(&small, gmlp_gemm_tiling_named("tiled_32x32x8_4x4")),
          "work-group limits: 64 work-items take 32x32 tiles of 4x4, not more");
    /* cp.async slices hold the operands as stored: three 128 x 16 slices of each bfloat16 operand fit
     * NVIDIA's 48 KiB (36 KiB: rows of 16 + 8 pad elements), of float ones not (72 KiB); the tiling fits the
     * device (some product does), the planner's check is per product (gemm_kernel.c's variant) */
    gmlp_devinfo nv48 = nvidia;
    nv48.local_mem = 48 * 1024;
    nv48.engines = GMLP_ENGINE_MMA_SYNC;
    const gmlp_tiling *s3 = gmlp_gemm_tiling_named("mma_128x128x16_8x16_s3_ldsm");
    const gmlp_gemm_operands bf16_nt = {GMLP_ELEM_BF16, GMLP_ELEM_BF16, true, true, GMLP_GEMM_BF16},
                             float_nt = {GMLP_ELEM_F32, GMLP_ELEM_F32, true, true, GMLP_GEMM_BF16};
    CHECK(s3 && gmlp_gemm_tiling_form_bytes(s3, &bf16_nt) == 3 * 2 * 128 * 24 * 2 &&
              gmlp_gemm_tiling_form_bytes(s3, &float_nt) == 3 * 2 * 128 * 24 * 4 && gmlp_gemm_tiling_fits(&nv48, s3),
          "cp.async slices as stored: %zu and %zu bytes", s3 ? gmlp_gemm_tiling_form_bytes(s3, &bf16_nt) : 0,
          s3 ? gmlp_gemm_tiling_form_bytes(s3, &float_nt) : 0);
    /* Hopper's wgmma rows: three 64-deep slices of 128 x 128 bfloat16 operands (96 KiB) past the 48 KiB the
     * driver reports, up to the engine's probed 227 KiB (the ladder's launch proves it), on sm_90 alone; the
     * instruction's 16-bit operands only */
    gmlp_devinfo h100 = nv48;
    h100.engines = GMLP_ENGINE_MMA_SYNC | GMLP_ENGINE_WGMMA;
    const gmlp_tiling *wg = gmlp_gemm_tiling_named("wgmma_128x128x64_8x8_s3_swz_r8");
    const gmlp_gemm_operands bf16_nn = {GMLP_ELEM_BF16, GMLP_ELEM_BF16, true, false, GMLP_GEMM_BF16},
                             half_bf16 = {GMLP_ELEM_F16, GMLP_ELEM_F16, true, true, GMLP_GEMM_BF16};
    CHECK(wg && gmlp_gemm_tiling_form_bytes(wg, &bf16_nt) == 3 * 2 * 128 * 64 * 2 &&
              gmlp_gemm_tiling_local_limit(&h100, wg) == 227 * 1024 && gmlp_gemm_tiling_fits(&h100, wg) &&
              !gmlp_gemm_tiling_fits(&nv48, wg) && gmlp_gemm_tiling_local_limit(&h100, s3) == 48 * 1024,
          "wgmma's 96 KiB past the reported 48 on sm_90 alone");
    CHECK(wg && gmlp_gemm_tiling_takes(wg, &bf16_nt) && gmlp_gemm_tiling_takes(wg, &bf16_nn) &&
              !gmlp_gemm_tiling_takes(wg, &float_nt) && !gmlp_gemm_tiling_takes(wg, &half_bf16) &&
              gmlp_gemm_tiling_takes(s3, &float_nt),
          "wgmma takes the instruction's 16-bit operands alone");
    const gmlp_tiling *reg = gmlp_gemm_tiling_named("mma_64x64x32_4x8");
    CHECK(reg && gmlp_gemm_tiling_form_bytes(reg, &float_nt) == gmlp_gemm_tiling_local_bytes(reg) &&
              gmlp_gemm_tiling_form_bytes(reg, &bf16_nt) == gmlp_gemm_tiling_local_bytes(reg),
          "the register staging's slices: words, whatever the storage");
    CHECK(gmlp_gemm_sizes_for(&cpu)->deep_k == 0 && gmlp_gemm_sizes_for(&amd)->deep_k > 0 &&
              gmlp_gemm_sizes_for(&other)->measured,
          "size classes: no deep class on CPUs, one on GPUs");
}

/* Tiles of 64 x 64 of an m x n product. */
static size_t tiles64(size_t m, size_t n)
{
    return (m + 63) / 64 * ((n + 63) / 64);
}

static void check_split(void)
{
    gmlp_devinfo h100 = device(CL_DEVICE_TYPE_GPU, GMLP_VENDOR_NVIDIA), cpu = device(CL_DEVICE_TYPE_CPU,
                                                                                   GMLP_VENDOR_INTEL);
    h100.compute_units = 132;
    cpu.compute_units = 64;
    /* gmlp_s16_224, 196 tokens an image: fc2 and the stem (n 256, k 768), fc1 (n 1536, k 256) */
    const size_t fc2 = gmlp_gemm_split_parts(&h100, tiles64(196, 256), 768),
                 fc1 = gmlp_gemm_split_parts(&h100, tiles64(196, 1536), 256);
    CHECK(fc2 >= 8 && fc2 <= 12 && tiles64(196, 256) * fc2 >= 132, "H100 fc2 at batch 1: %zu parts", fc2);
    CHECK(fc1 == 2, "H100 fc1 at batch 1: %zu parts (96 tiles for 132 SMs)", fc1);
    CHECK(gmlp_gemm_split_parts(&h100, tiles64(16 * 196, 256), 768) == 1, "H100 fc2 at batch 16 (196 tiles): split");
    CHECK(gmlp_gemm_split_parts(&h100, tiles64(32 * 196, 256), 768) == 1, "H100 fc2 at batch 32: split");
    CHECK(gmlp_gemm_split_parts(&h100, tiles64(196, 256), 128) == 1, "H100, k = 128: split");
    CHECK(gmlp_gemm_split_parts(&h100, 1, 100000) <= GMLP_GEMM_SPLIT_MAX, "H100: more parts than the most");
    CHECK(gmlp_gemm_split_parts(&h100, 1, 300) == 4, "H100, one tile over k = 300: %zu parts, not 64-deep ones",
          gmlp_gemm_split_parts(&h100, 1, 300));
    for (gmlp_vendor v = GMLP_VENDOR_ANY; v <= GMLP_VENDOR_INTEL; v++) {
        gmlp_devinfo gpu = h100;
        gpu.vendor_id = v;
        CHECK(gmlp_gemm_split_parts(&gpu, tiles64(196, 256), 768) > 1, "a GPU of vendor %d: no split", (int)v);
    }
    CHECK(gmlp_gemm_split_parts(&cpu, tiles64(196, 256), 768) == 1 && gmlp_gemm_split_parts(&cpu, 1, 4096) == 1,
          "CPUs: split");
    gmlp_devinfo acc = device(CL_DEVICE_TYPE_ACCELERATOR, GMLP_VENDOR_ANY);
    CHECK(gmlp_gemm_split_parts(&acc, 1, 4096) == 1, "an accelerator: split");
    CHECK(gmlp_gemm_split_for(&cpu)->measured && gmlp_gemm_split_for(&h100)->measured &&
              gmlp_gemm_split_for(&acc)->measured && gmlp_gemm_split_for(&h100)->max_parts <= GMLP_GEMM_SPLIT_MAX,
          "split-K rows: each says what chose it");
}

/* Every combination of the axes' values (their indices in digits[]), from axis i on. */
static void each_variant(const gmlp_gemm_axis *axes, size_t n, size_t i, gmlp_gemm_variant *v, unsigned char *seen,
                         size_t *count)
{
    if (i == n) {
        const size_t key = gmlp_gemm_variant_key(v);
        CHECK(key < GMLP_GEMM_VARIANT_KEYS, "key %zu within %d", key, GMLP_GEMM_VARIANT_KEYS);
        if (key < GMLP_GEMM_VARIANT_KEYS && v->issue == GMLP_ISSUE_NATIVE) { /* issue: no part of the key */
            CHECK(!seen[key], "key %zu taken twice", key);
            seen[key] = 1;
            (*count)++;
        }
        return;
    }
    for (int d = 0; d < axes[i].radix; d++) {
        ((unsigned char *)v)[axes[i].offset] = (unsigned char)axes[i].values[d];
        each_variant(axes, n, i + 1, v, seen, count);
    }
}

static void check_axes(void)
{
    size_t n, count = 0, keys = 1;
    const gmlp_gemm_axis *axes = gmlp_gemm_axes(&n);
    static unsigned char seen[GMLP_GEMM_VARIANT_KEYS];
    gmlp_gemm_variant v = {0};
    for (size_t i = 0; i < n; i++) {
        keys *= axes[i].keyed ? (size_t)axes[i].radix : 1;
        CHECK(axes[i].radix >= 1 && axes[i].radix <= GMLP_GEMM_AXIS_VALUES && axes[i].offset < sizeof v,
              "axis %s: %d values", axes[i].field, axes[i].radix);
    }
    CHECK(keys == GMLP_GEMM_VARIANT_KEYS, "the keyed axes give %zu keys, not %d", keys, GMLP_GEMM_VARIANT_KEYS);
    each_variant(axes, n, 0, &v, seen, &count);
    CHECK(count == GMLP_GEMM_VARIANT_KEYS, "%zu of %d keys reached", count, GMLP_GEMM_VARIANT_KEYS);
    /* a variant's defines: the values other than the first, then the tiling's own */
    const gmlp_tiling *t = gmlp_gemm_tiling_named("mma_64x64x16_4x8_s3_ldsm");
    const gmlp_gemm_variant bf = {.tb = 1, .vw = 4, .a = GMLP_ELEM_BF16, .b = GMLP_ELEM_F16, .c = GMLP_ELEM_BF16,
                                  .precision = GMLP_GEMM_BF16, .issue = GMLP_ISSUE_EMULATED};
    char defs[400], tiling[300], label[200], want[700];
    gmlp_gemm_variant_defines(&bf, t, 1, defs, sizeof defs);
    gmlp_gemm_tiling_defines(t, 1, tiling, sizeof tiling);
    snprintf(want, sizeof want, "-DGMLP_GEMM_TB=1 -DGMLP_GEMM_VW=4 -DGMLP_GEMM_A=2 -DGMLP_GEMM_B=1 -DGMLP_GEMM_C=2 "
             "-DGMLP_GEMM_PRECISION=3 -DGMLP_GEMM_ISSUE=1 %s", tiling);
    CHECK(!strcmp(defs, want), "defines '%s', want '%s'", defs, want);
    CHECK(!strcmp(tiling, "-DGMLP_GEMM_UNROLL=1 -DGMLP_GEMM_TM=64 -DGMLP_GEMM_TN=64 -DGMLP_GEMM_TK=16 -DGMLP_GEMM_WM=4 "
                          "-DGMLP_GEMM_WN=8 -DGMLP_MMA_STAGES=3 -DGMLP_MMA_LDSM=1"), "tiling defines '%s'", tiling);
    gmlp_gemm_variant_label(&bf, t, label, sizeof label);
    CHECK(!strcmp(label, "gmlp_gemm_mma mma_64x64x16_4x8_s3_ldsm NT v4 A:bf16 B:half C:bf16 bf16 emulated"),
          "label '%s'", label);
    const gmlp_gemm_variant plain = {.vw = 1};
    gmlp_gemm_variant_defines(&plain, gmlp_gemm_tiling_named("tiled_16x16x4_4x4"), 0, defs, sizeof defs);
    CHECK(!strncmp(defs, "-DGMLP_GEMM_UNROLL=0 ", 21), "the kernels' defaults left out: '%s'", defs);
    /* the direct kernel's width is its own, the others' at most the operands' */
    const gmlp_gemm_variant v1 = gmlp_gemm_variant_on(&plain, gmlp_gemm_tiling_named("direct_4x64_1x4_v4"));
    const gmlp_gemm_variant v4 = {.vw = 4}, on = gmlp_gemm_variant_on(&v4, gmlp_gemm_tiling_named("xmx8_64x64x16_4x8"));
    CHECK(v1.vw == 4 && on.vw == 1, "vector widths %d, %d", v1.vw, on.vw);
    const gmlp_tiling *v8 = gmlp_gemm_tiling_named("direct_16x32_4x16_v8");
    const gmlp_gemm_variant d8 = gmlp_gemm_variant_on(&v4, v8);
    gmlp_gemm_variant_defines(&d8, v8, 0, defs, sizeof defs);
    gmlp_gemm_variant_label(&d8, v8, label, sizeof label);
    CHECK(strstr(defs, "-DGMLP_GEMM_VW=8 ") && strstr(label, " v8 "), "a width no alignment gives: '%s', '%s'", defs,
          label);
    /* how a device's compiler wants the code: prefetching and the whole-block epilogue in the CPUs' blocks on the
     * platforms compiling by clang alone (rusticl's SPIR-V translator stops the process on the intrinsic, and
     * builds the second copy slowly), unrolled on GPUs */
    const gmlp_devinfo pocl = {.type = CL_DEVICE_TYPE_CPU, .platform_name = "Portable Computing Language"},
                       intel = {.type = CL_DEVICE_TYPE_CPU, .platform_name = "Intel(R) OpenCL"},
                       rusticl = {.type = CL_DEVICE_TYPE_CPU, .platform_name = "rusticl"},
                       gpu = {.type = CL_DEVICE_TYPE_GPU, .platform_name = "Portable Computing Language"};
    const unsigned pocl_cpu = GMLP_RUNTIME_OWN_CACHE | GMLP_RUNTIME_CPU_CLANG | GMLP_RUNTIME_CPU_X86_BUILTINS;
    CHECK(gmlp_runtime_facts(&pocl) == pocl_cpu &&
              gmlp_runtime_facts(&intel) == GMLP_RUNTIME_CPU_CLANG && gmlp_runtime_facts(&rusticl) == 0 &&
              gmlp_runtime_facts(&gpu) == GMLP_RUNTIME_OWN_CACHE,
          "runtime facts %#x %#x %#x %#x", gmlp_runtime_facts(&pocl), gmlp_runtime_facts(&intel),
          gmlp_runtime_facts(&rusticl), gmlp_runtime_facts(&gpu));
    const int clang = GMLP_GEMM_CODE_PREFETCH | GMLP_GEMM_CODE_WHOLE;
    CHECK(gmlp_gemm_code(&pocl) == clang && gmlp_gemm_code(&intel) == clang &&
              gmlp_gemm_code(&rusticl) == 0 && gmlp_gemm_code(&gpu) == GMLP_GEMM_CODE_UNROLLED,
          "codes %d %d %d %d", gmlp_gemm_code(&pocl), gmlp_gemm_code(&intel), gmlp_gemm_code(&rusticl),
          gmlp_gemm_code(&gpu));
    gmlp_gemm_tiling_defines(v8, gmlp_gemm_code(&pocl), tiling, sizeof tiling);
    CHECK(strstr(tiling, " -DGMLP_GEMM_CPU=1 -DGMLP_GEMM_PREFETCH=1 -DGMLP_GEMM_WHOLE=1") &&
              strstr(tiling, "-DGMLP_GEMM_UNROLL=0 "),
          "a CPUs' tiling on PoCL: '%s'", tiling);
    gmlp_gemm_tiling_defines(v8, gmlp_gemm_code(&rusticl), tiling, sizeof tiling);
    CHECK(strstr(tiling, " -DGMLP_GEMM_CPU=1") && !strstr(tiling, "PREFETCH") && !strstr(tiling, "WHOLE"),
          "on rusticl: '%s'", tiling);
    gmlp_gemm_tiling_defines(gmlp_gemm_tiling_named("tiled_16x16x4_4x4"), gmlp_gemm_code(&pocl), tiling,
                             sizeof tiling);
    CHECK(!strstr(tiling, "PREFETCH") && !strstr(tiling, "WHOLE") && !strstr(tiling, "GMLP_GEMM_CPU"),
          "another tiling on PoCL: '%s'", tiling);
    /* the engines' bits: one each, in table order, all below EMULATED */
    unsigned seen_bits = 0, last = 0;
    for (unsigned bit = 1; bit && bit < GMLP_ENGINE_EMULATED; bit <<= 1) {
        const gmlp_engine *e = gmlp_engine_of(bit);
        if (e && e->bit == bit) {
            CHECK(bit > last && !(seen_bits & bit) && e->lanes > 0 && e->m > 0 && e->n > 0 && e->local_mem > 0,
                  "engine %s: bit %#x", e->prefix, bit);
            seen_bits |= bit, last = bit;
        }
    }
    CHECK(seen_bits == (last << 1) - 1 && !gmlp_engine_of(GMLP_ENGINE_EMULATED), "engine bits %#x: from bit 0 on",
          seen_bits);
}

/* gmlp_gemm_linear_layout on made-up contexts: the CPUs' forms row, and GMLP_PACK's two overrides */
static void check_packs(void)
{
    static gmlp_context ctx; /* large: static */
    ctx.dev = device(CL_DEVICE_TYPE_CPU, GMLP_VENDOR_ANY);
    ctx.set.pack = 1;
    CHECK(gmlp_gemm_linear_layout(&ctx, GMLP_GEMM_FP32) == GMLP_LINEAR_KN &&
              gmlp_gemm_linear_layout(&ctx, GMLP_GEMM_BF16) == GMLP_LINEAR_KN,
          "a CPU packs in x out");
    ctx.dev.engines = GMLP_ENGINE_AVX512_BF16;
    CHECK(gmlp_gemm_linear_layout(&ctx, GMLP_GEMM_FP32) == GMLP_LINEAR_KN &&
              gmlp_gemm_linear_layout(&ctx, GMLP_GEMM_FP16) == GMLP_LINEAR_KN &&
              gmlp_gemm_linear_layout(&ctx, GMLP_GEMM_BF16) == GMLP_LINEAR_PAIRS,
          "a CPU with AVX512_BF16 packs BF16's linear weights as pairs along k");
    ctx.set.pack = GMLP_PACK_ALL;
    CHECK(gmlp_gemm_linear_layout(&ctx, GMLP_GEMM_BF16) == GMLP_LINEAR_PAIRS &&
              gmlp_gemm_linear_layout(&ctx, GMLP_GEMM_FP32) == GMLP_LINEAR_KN,
          "GMLP_PACK=1 packs, pairs where the row says");
    ctx.dev.engines = 0;
    CHECK(gmlp_gemm_linear_layout(&ctx, GMLP_GEMM_BF16) == GMLP_LINEAR_KN, "no AVX512_BF16, no pairs");
    ctx.set.pack = 0;
    ctx.dev.engines = GMLP_ENGINE_AVX512_BF16;
    CHECK(gmlp_gemm_linear_layout(&ctx, GMLP_GEMM_FP32) == GMLP_LINEAR_FILE &&
              gmlp_gemm_linear_layout(&ctx, GMLP_GEMM_BF16) == GMLP_LINEAR_FILE,
          "GMLP_PACK=0 packs none");
    ctx.set.pack = 1;
    ctx.dev = device(CL_DEVICE_TYPE_GPU, GMLP_VENDOR_NVIDIA);
    CHECK(gmlp_gemm_linear_layout(&ctx, GMLP_GEMM_FP32) == GMLP_LINEAR_FILE, "a GPU keeps the file's layout");
}

int main(void)
{
    check_tilings();
    check_packs();
    check_defaults();
    check_split();
    check_axes();
    return check_summary("gemm-tables");
}
