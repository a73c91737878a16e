/* Patch extraction for the stem (Conv2d with kernel = stride = patch): row
 * b*ntok + t of out holds patch t of image b in (c, ky, kx) order, the order
 * of the Conv2d weight, so the stem becomes one GEMM. Tokens are row-major
 * over the patch grid (timm's flatten(2).transpose(1, 2)).  A work-item
 * copies one row of one patch, (c, ky): pw pixels contiguous in the image
 * and in out, its index arithmetic once for them (per pixel, its integer
 * divisions, which x86 has no vector form of, took PoCL 4.6 ms for 8
 * images of 224 x 224).  Stored as out's rows say (os: GMLP_STORE_*): in
 * a 16-bit mode, the stem's A rounded as its GEMM rounds it. */
__kernel void gmlp_patchify(__global const float *img, ulong img_off, __global void *out, ulong out_off, ulong ldo,
                            int os, int chans, int height, int width, int ph, int pw, int grid_w, int ntok)
{
    const int cy = get_global_id(0); /* c ph + ky */
    const size_t row = get_global_id(1);
    const size_t b = row / (size_t)ntok;
    const int t = (int)(row % (size_t)ntok), c = cy / ph, ky = cy % ph;
    const int y = (t / grid_w) * ph + ky, x0 = (t % grid_w) * pw;
    __global const float *src = img + img_off + ((b * chans + c) * (size_t)height + y) * width + x0;
    const size_t dst = out_off + row * ldo + (size_t)cy * pw;
    for (int kx = 0; kx < pw; kx++)
        gmlp_elem_put(os, out, dst + kx, src[kx]);
}
