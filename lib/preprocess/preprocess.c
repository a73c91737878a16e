/* timm's eval transform (transforms_imagenet_eval) for 8-bit images,
 * reproducing what PIL and torchvision compute:
 *   convert to L or RGB → resize with PIL's resampling, by crop_mode:
 *     center: shorter side to floor(size / crop_pct) (timm's ResizeKeepRatio
 *       for non-square targets), then CenterCrop (padding with zeros);
 *     squash: both sides to floor(size / crop_pct), then CenterCrop;
 *     border: longer side to floor(size / crop_pct), then timm's
 *       CenterCropOrPad, padding with the mean colour;
 *   → ToTensor → Normalize.
 * The resampling follows Pillow's Resample.c: separable passes (horizontal,
 * then vertical) on uint8 with 22-bit fixed-point coefficients and the
 * filter support widened by the scale when shrinking (antialiasing), and
 * nearest neighbour as Pillow's affine scaling does it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "preprocess/preprocess.h"

#define PRECISION_BITS (32 - 8 - 2)
#define MAX_PIXELS ((size_t)1 << 30)

#define fail(st, ...) gmlp_fail(err, st, "gmlp_preprocess_rgb8: " __VA_ARGS__)

/* PIL's convert('L') (ITU-R 601-2 luma in 16-bit fixed point) or
 * convert('RGB') (grey repeated); alpha is dropped. */
static void convert(const uint8_t *in, int cin, uint8_t *out, int cout, size_t pixels)
{
    for (size_t i = 0; i < pixels; i++, in += cin) {
        int grey_in = cin <= 2;
        if (cout == 1)
            *out++ = grey_in ? in[0] : (uint8_t)((in[0] * 19595 + in[1] * 38470 + in[2] * 7471 + 0x8000) >> 16);
        else
            for (int c = 0; c < 3; c++)
                *out++ = in[grey_in ? 0 : c];
    }
}

/* Pillow's filters (Resample.c), in double as there; `support` is the
 * half-width at scale 1. */
static double box(double x)
{
    return x > -0.5 && x <= 0.5 ? 1.0 : 0.0;
}

static double bilinear(double x)
{
    x = fabs(x);
    return x < 1.0 ? 1.0 - x : 0.0;
}

static double hamming(double x)
{
    x = fabs(x);
    if (x == 0.0)
        return 1.0;
    if (x >= 1.0)
        return 0.0;
    x *= M_PI;
    return sin(x) / x * (0.54f + 0.46f * cos(x)); /* float constants, as Pillow's */
}

static double bicubic(double x)
{
    const double a = -0.5;
    x = fabs(x);
    if (x < 1.0)
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
    if (x < 2.0)
        return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
}

static double sinc(double x)
{
    if (x == 0.0)
        return 1.0;
    x *= M_PI;
    return sin(x) / x;
}

static double lanczos(double x)
{
    return -3.0 <= x && x < 3.0 ? sinc(x) * sinc(x / 3) : 0.0;
}

typedef struct filter {
    double (*f)(double);
    double support;
} filter;

static const filter filters[] = {
    [GMLP_INTERP_BICUBIC] = {bicubic, 2.0}, [GMLP_INTERP_BILINEAR] = {bilinear, 1.0},
    [GMLP_INTERP_BOX] = {box, 0.5},         [GMLP_INTERP_HAMMING] = {hamming, 1.0},
    [GMLP_INTERP_LANCZOS] = {lanczos, 3.0},
};

/* One output position's taps: first input index, count, fixed-point weights. */
typedef struct taps {
    int ksize;
    int *first, *count;
    int32_t *k; /* out_size x ksize */
} taps;

static void taps_free(taps *t)
{
    free(t->first);
    free(t->count);
    free(t->k);
}

/* Pillow's precompute_coeffs + normalize_coeffs_8bpc. */
static int taps_make(taps *t, int in_size, int out_size, int interp)
{
    const filter *filt = &filters[interp];
    double scale = (double)in_size / out_size, filterscale = scale < 1.0 ? 1.0 : scale;
    double support = filt->support * filterscale;
    t->ksize = (int)ceil(support) * 2 + 1;
    t->first = gmlp_malloc(sizeof(int) * (size_t)out_size);
    t->count = gmlp_malloc(sizeof(int) * (size_t)out_size);
    t->k = gmlp_calloc((size_t)out_size * (size_t)t->ksize, sizeof(int32_t));
    double *w = gmlp_malloc(sizeof(double) * (size_t)t->ksize);
    if (!t->first || !t->count || !t->k || !w) {
        free(w);
        return 0;
    }
    for (int xx = 0; xx < out_size; xx++) {
        double center = (xx + 0.5) * scale, ss = 1.0 / filterscale, ww = 0.0;
        int xmin = (int)(center - support + 0.5), xmax = (int)(center + support + 0.5);
        if (xmin < 0)
            xmin = 0;
        if (xmax > in_size)
            xmax = in_size;
        xmax -= xmin;
        for (int x = 0; x < xmax; x++) {
            w[x] = filt->f((x + xmin - center + 0.5) * ss);
            ww += w[x];
        }
        for (int x = 0; x < xmax; x++) {
            double v = ww != 0.0 ? w[x] / ww : w[x];
            t->k[(size_t)xx * t->ksize + x] = (int32_t)(v < 0 ? -0.5 + v * (1 << PRECISION_BITS)
                                                              : 0.5 + v * (1 << PRECISION_BITS));
        }
        t->first[xx] = xmin;
        t->count[xx] = xmax;
    }
    free(w);
    return 1;
}

static uint8_t clip8(int32_t v)
{
    if (v >= (1 << PRECISION_BITS << 8))
        return 255;
    if (v <= 0)
        return 0;
    return (uint8_t)(v >> PRECISION_BITS);
}

/* One separable pass over an image of `lines` lines: step_in/step_out are
 * the distances between consecutive taps/outputs, line_in/line_out between
 * lines, all in bytes of one channel plane interleaved with `ch` channels. */
typedef struct pass_geom {
    int lines, ch;
    size_t line_in, line_out, step_in, step_out;
} pass_geom;

static void resample_pass(const uint8_t *in, uint8_t *out, int out_size, const taps *t, pass_geom g)
{
    for (int l = 0; l < g.lines; l++)
        for (int xx = 0; xx < out_size; xx++) {
            const int32_t *k = &t->k[(size_t)xx * t->ksize];
            const uint8_t *src = in + (size_t)l * g.line_in + (size_t)t->first[xx] * g.step_in;
            uint8_t *dst = out + (size_t)l * g.line_out + (size_t)xx * g.step_out;
            for (int c = 0; c < g.ch; c++) {
                int32_t ss = 1 << (PRECISION_BITS - 1);
                for (int x = 0; x < t->count[xx]; x++)
                    ss += src[(size_t)x * g.step_in + c] * k[x];
                dst[c] = clip8(ss);
            }
        }
}

static int resize_filtered(const uint8_t *in, int w, int h, int ch, uint8_t *out, int ow, int oh, int interp)
{
    taps th = {0}, tv = {0};
    uint8_t *tmp = gmlp_malloc((size_t)ow * h * ch);
    int ok = tmp && taps_make(&th, w, ow, interp) && taps_make(&tv, h, oh, interp);
    if (ok) {
        size_t row_in = (size_t)w * ch, row_tmp = (size_t)ow * ch;
        pass_geom horizontal = {h, ch, row_in, row_tmp, (size_t)ch, (size_t)ch};
        pass_geom vertical = {ow, ch, (size_t)ch, (size_t)ch, row_tmp, row_tmp};
        resample_pass(in, tmp, ow, &th, horizontal);
        resample_pass(tmp, out, oh, &tv, vertical);
    }
    taps_free(&th);
    taps_free(&tv);
    free(tmp);
    return ok;
}

/* Pillow's ImagingScaleAffine: source position accumulated in double. */
static void resize_nearest(const uint8_t *in, int w, int h, int ch, uint8_t *out, int ow, int oh)
{
    double ax = (double)w / ow, ay = (double)h / oh, yo = ay * 0.5;
    for (int y = 0; y < oh; y++, yo += ay) {
        int yin = (int)yo;
        double xo = ax * 0.5;
        for (int x = 0; x < ow; x++, xo += ax)
            memcpy(out + ((size_t)y * ow + x) * ch, in + ((size_t)yin * w + (int)xo) * ch, (size_t)ch);
    }
}

/* Size before the crop: squash, Resize((scale_h, scale_w)); border, timm's
 * ResizeKeepRatio(longest=1); center, torchvision's Resize(int) or, for a
 * non-square target, ResizeKeepRatio(longest=0).  A message when it would
 * exceed MAX_PIXELS (checked in double, before any int cast) or, as only the
 * border mode can make it, have a side of 0 pixels (PIL refuses that resize,
 * so timm fails on such an image: a 5x89 image for a 5x5 model). */
static const char *resized_size(int w, int h, int scale_h, int scale_w, int mode, int *ow, int *oh)
{
    double dw, dh;
    if (mode == GMLP_CROP_SQUASH) {
        dw = scale_w;
        dh = scale_h;
    } else if (mode == GMLP_CROP_CENTER && scale_h == scale_w) {
        /* int(s * long / short): the product is exact in double, as in Python */
        int shorter = w <= h ? w : h, longer = w <= h ? h : w;
        double other = floor((double)scale_h * longer / shorter);
        dw = w <= h ? scale_h : other;
        dh = w <= h ? other : scale_h;
    } else {
        double rh = (double)h / scale_h, rw = (double)w / scale_w;
        double ratio = mode == GMLP_CROP_BORDER ? fmax(rh, rw) : fmin(rh, rw);
        dh = rint(h / ratio); /* Python's round(): half to even */
        dw = rint(w / ratio);
    }
    if (dw * dh > (double)MAX_PIXELS)
        return "the resized image would exceed 2^30 pixels";
    if (dw < 1 || dh < 1)
        return "the image is too elongated for the model: keeping its aspect ratio, a side resizes to 0 pixels "
               "(timm's resize fails on it too)";
    *ow = (int)dw;
    *oh = (int)dh;
    return NULL;
}

/* A config value as the double Python holds: the shortest decimal that reads
 * back as this float (crop_pct "0.8", not 0.800000011920929, which would make
 * floor(224 / crop_pct) 279 instead of timm's 280). */
static double python_decimal(float f)
{
    char buf[32];
    for (int digits = 1; digits < 9; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, (double)f);
        if (strtof(buf, NULL) == f)
            return strtod(buf, NULL);
    }
    return f;
}

int gmlp_preprocess_resize_size(const gmlp_config *cfg, int *sh, int *sw)
{
    const double crop_pct = python_decimal(cfg->crop_pct);
    double h = floor(cfg->img_h / crop_pct), w = floor(cfg->img_w / crop_pct);
    if (!(h >= 1 && w >= 1 && h <= 65536 && w <= 65536))
        return 0;
    *sh = (int)h;
    *sw = (int)w;
    return 1;
}

/* timm's border fill, round(255 * mean) (Python's round: half to even, as rint). */
static uint8_t mean_colour(float mean)
{
    return (uint8_t)fmin(255, fmax(0, rint(255 * python_decimal(mean))));
}

/* torchvision CenterCrop offset; negative when it pads (with zeros). */
static int crop_offset(int size, int crop)
{
    return size >= crop ? (int)rint((size - crop) / 2.0) : -((crop - size) / 2);
}

gmlp_status gmlp_preprocess_image(const gmlp_config *cfg, const uint8_t *pixels, int width, int height, int channels,
                                  float *out, gmlp_error *err)
{
    if (!cfg || !pixels || !out)
        return fail(GMLP_ERR_INVALID_ARGUMENT, "NULL argument");
    if (width <= 0 || height <= 0 || (size_t)width * (size_t)height > MAX_PIXELS)
        return fail(GMLP_ERR_INVALID_ARGUMENT, "image size must be positive and at most 2^30 pixels");
    if (channels < 1 || channels > 4)
        return fail(GMLP_ERR_INVALID_ARGUMENT, "channels must be 1 (grey), 2 (grey+alpha), 3 (RGB) or 4 (RGBA)");
    if (cfg->in_chans != 1 && cfg->in_chans != 3)
        return fail(GMLP_ERR_INVALID_ARGUMENT, "the model takes %d input channels; an image gives 1 (grey) or 3 (RGB)",
                    cfg->in_chans);
    if (cfg->img_h <= 0 || cfg->img_w <= 0 || !(cfg->crop_pct > 0.0f) || cfg->interpolation < GMLP_INTERP_BICUBIC ||
        cfg->interpolation > GMLP_INTERP_LANCZOS)
        return fail(GMLP_ERR_INVALID_ARGUMENT, "config needs positive img_h/img_w and crop_pct, a known interpolation");
    if (cfg->crop_mode < GMLP_CROP_CENTER || cfg->crop_mode > GMLP_CROP_BORDER)
        return fail(GMLP_ERR_INVALID_ARGUMENT, "crop_mode must be GMLP_CROP_CENTER, _SQUASH or _BORDER");
    for (int c = 0; c < cfg->in_chans; c++)
        if (!(cfg->std[c] > 0.0f) || !isfinite(cfg->mean[c]))
            return fail(GMLP_ERR_INVALID_ARGUMENT, "std must be positive and mean finite");
    int sh, sw;
    if (!gmlp_preprocess_resize_size(cfg, &sh, &sw))
        return fail(GMLP_ERR_INVALID_ARGUMENT, "floor(img_size / crop_pct) must be in [1, 65536]");
    const int ch = cfg->in_chans;
    int ow, oh;
    const char *bad_size = resized_size(width, height, sh, sw, cfg->crop_mode, &ow, &oh);
    if (bad_size)
        return fail(GMLP_ERR_INVALID_ARGUMENT, "%s", bad_size);

    uint8_t *conv = gmlp_malloc((size_t)width * height * ch), *resized = conv;
    if (!conv)
        return fail(GMLP_ERR_HOST_MEMORY, "out of host memory");
    convert(pixels, channels, conv, ch, (size_t)width * height);
    if (ow != width || oh != height) {
        resized = gmlp_malloc((size_t)ow * oh * ch);
        int ok = resized != NULL;
        if (ok && cfg->interpolation == GMLP_INTERP_NEAREST)
            resize_nearest(conv, width, height, ch, resized, ow, oh);
        else if (ok)
            ok = resize_filtered(conv, width, height, ch, resized, ow, oh, cfg->interpolation);
        free(conv);
        if (!ok) {
            free(resized);
            return fail(GMLP_ERR_HOST_MEMORY, "out of host memory");
        }
    }
    const int top = crop_offset(oh, cfg->img_h), left = crop_offset(ow, cfg->img_w);
    for (int c = 0; c < ch; c++) {
        const uint8_t pad = cfg->crop_mode == GMLP_CROP_BORDER ? mean_colour(cfg->mean[c]) : 0;
        for (int y = 0; y < cfg->img_h; y++)
            for (int x = 0; x < cfg->img_w; x++) {
                int sy = y + top, sx = x + left;
                uint8_t v = sy >= 0 && sy < oh && sx >= 0 && sx < ow ? resized[((size_t)sy * ow + sx) * ch + c] : pad;
                /* float32 as ToTensor then Normalize compute it */
                float f = (float)v / 255.0f;
                out[((size_t)c * cfg->img_h + y) * cfg->img_w + x] = (f - cfg->mean[c]) / cfg->std[c];
            }
    }
    free(resized);
    return GMLP_OK;
}
