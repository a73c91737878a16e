/* Platform/device enumeration, selection by name, and one shared cl_context
 * per device for the whole process. */
#ifndef GMLP_DEVICE_H
#define GMLP_DEVICE_H

#include <CL/cl.h>
#include <stddef.h>

#include "core/error.h"

/* The GPU vendors whose devices tables may single out (CL_DEVICE_VENDOR_ID). */
typedef enum gmlp_vendor {
    GMLP_VENDOR_ANY,    /* in a table row: every vendor; of a device: none of these */
    GMLP_VENDOR_NVIDIA, /* 0x10de */
    GMLP_VENDOR_AMD,    /* 0x1002 */
    GMLP_VENDOR_INTEL,  /* 0x8086 */
} gmlp_vendor;

typedef struct gmlp_devinfo {
    size_t index;             /* in gmlp_devices_enumerate order */
    cl_platform_id platform;
    cl_device_id device;
    cl_device_type type;
    char platform_name[128];
    char name[128];
    char vendor[128];
    char version[128];        /* CL_DEVICE_VERSION */
    char driver[128];         /* CL_DRIVER_VERSION */
    cl_uint compute_units;
    cl_ulong global_mem;
    cl_ulong max_alloc;
    cl_ulong local_mem;       /* bytes of local memory per work-group */
    size_t max_wg;
    size_t max_wi[3];         /* work-items per work-group along each dimension */
    cl_uint native_floats;    /* CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: a CPU's SIMD width in floats */
    gmlp_vendor vendor_id;
    /* The architecture, where the vendor's extension tells: NVIDIA's compute
     * capability ("sm_90", cl_nv_device_attribute_query), AMD's gfx name
     * ("gfx90a", the device name under ROCm; else cl_amd_device_attribute_query's
     * GFXIP "gfx9.0"), Intel's IP version ("12.55.8", cl_intel_device_attribute_query);
     * "" where none does (CPUs, other GPUs). */
    char arch[32];
    /* The matrix engines (lib/ops's GMLP_ENGINE_*) that lib/ops's capability
     * ladder proved on this device in this context: 0 until it ran. */
    unsigned engines;
} gmlp_devinfo;

/* Whether d lists extension name (a whole word of CL_DEVICE_EXTENSIONS). */
int gmlp_device_has_extension(cl_device_id d, const char *name);

/* What the library needs to know of device d of platform p (index 0). */
void gmlp_devinfo_query(cl_platform_id p, cl_device_id d, gmlp_devinfo *info);

/* All devices of all platforms in selection-index order (*list malloc'd). */
gmlp_status gmlp_devices_enumerate(gmlp_devinfo **list, size_t *count, gmlp_error *err);

/* spec: NULL/"" = default (first GPU, else first device); an index; "gpu";
 * "cpu"; or a case-insensitive substring of platform, device or vendor. */
gmlp_status gmlp_device_select(const char *spec, gmlp_devinfo *out, gmlp_error *err);

/* What the OpenCL implementations the library knows do, by CL_PLATFORM_NAME
 * (a mask; 0 on other platforms; the CPU_ facts on CPU devices alone). */
enum {
    /* Compiled kernels kept in a disk cache of its own (PoCL's POCL_KERNEL_CACHE). */
    GMLP_RUNTIME_OWN_CACHE = 1,
    /* OpenCL C through clang and LLVM straight to this host's machine code
     * (PoCL, Intel's CPU runtime): clang's __builtin_prefetch taken, large
     * inlined functions built in LLVM's time.  rusticl's way, through SPIR-V
     * and NIR to llvmpipe, stops the process on llvm.prefetch and took 4x as
     * long on the direct kernel with its whole-block epilogue. */
    GMLP_RUNTIME_CPU_CLANG = 2,
    /* x86's builtins reachable from OpenCL C (PoCL: vdpbf16ps). */
    GMLP_RUNTIME_CPU_X86_BUILTINS = 4,
};
unsigned gmlp_runtime_facts(const gmlp_devinfo *d);

/* One line describing a device, as gmlp_list_devices prints it. */
int gmlp_devinfo_format(const gmlp_devinfo *d, size_t index, char *buf, size_t size);

/* Reference-counted process-wide context for a device. */
gmlp_status gmlp_shared_context_acquire(const gmlp_devinfo *d, cl_context *out, gmlp_error *err);
void gmlp_shared_context_release(cl_context c);

#endif
