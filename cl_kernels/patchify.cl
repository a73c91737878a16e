/* Patch extraction for the stem (Conv2d with kernel = stride = patch): row
 * b*ntok + t of out holds patch t of image b in (c, ky, kx) order, the order
 * of the Conv2d weight, so the stem becomes one GEMM. Tokens are row-major
 * over the patch grid (timm's flatten(2).transpose(1, 2)). */
__kernel void gmlp_patchify(__global const float *img, ulong img_off, __global float *out, int chans, int height,
                            int width, int ph, int pw, int grid_w, int ntok)
{
    img += img_off;
    const int k = get_global_id(0);
    const size_t row = get_global_id(1);
    const int K = chans * ph * pw;
    const size_t b = row / (size_t)ntok;
    const int t = (int)(row % (size_t)ntok);
    const int c = k / (ph * pw), ky = (k / pw) % ph, kx = k % pw;
    const int y = (t / grid_w) * ph + ky, x = (t % grid_w) * pw + kx;
    out[row * (size_t)K + k] = img[((b * chans + c) * (size_t)height + y) * width + x];
}
