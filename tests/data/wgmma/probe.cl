/* A probe of the wgmma splice (tests/test_wgmma_splice.sh): a warp group's
 * m64n64k16 products over four k steps, each a marker carrying its real
 * operands (lib/ops/wgmma_splice.h): 32 accumulators a work-item as "+f"
 * operands, the operands' descriptors as 64-bit values. */
#define WGMMA __asm__ volatile
#define ACC(i) "+f"(d[i])
#define ACC8(i) ACC(i), ACC(i + 1), ACC(i + 2), ACC(i + 3), ACC(i + 4), ACC(i + 5), ACC(i + 6), ACC(i + 7)

__kernel void gmlp_wgmma_probe(__global float *out, __global const ulong *desc)
{
    float d[32];
    for (int i = 0; i < 32; i++)
        d[i] = 0.0f;
    for (int k = 0; k < 4; k++) {
        WGMMA("// gmlp.wgmma.v1 fence");
        WGMMA("// gmlp.wgmma.v1 mma m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "
              "%13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, "
              "%33, 0, 1"
              : ACC8(0), ACC8(8), ACC8(16), ACC8(24)
              : "l"(desc[2 * k]), "l"(desc[2 * k + 1]));
        WGMMA("// gmlp.wgmma.v1 commit");
    }
    WGMMA("// gmlp.wgmma.v1 wait 0" : ACC8(0), ACC8(8), ACC8(16), ACC8(24));
    for (int i = 0; i < 32; i++)
        out[i] = d[i];
}
