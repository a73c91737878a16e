/* The OpenCL interposer (clshim.h). */
#include "clshim.h"

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

static atomic_ulong counts[CLSHIM_CALLS], fail_at;
static atomic_int lazy_mode, lazy_pending;

unsigned long clshim_count(clshim_call call)
{
    return atomic_load(&counts[call]);
}

unsigned long clshim_launches(void)
{
    return clshim_count(CLSHIM_ENQUEUE_KERNEL) + clshim_count(CLSHIM_ENQUEUE_COMMAND_BUFFER);
}

void clshim_reset(void)
{
    clshim_fail_buffer(0, 0);
}

void clshim_fail_buffer(unsigned long n, int lazy)
{
    for (int i = 0; i < CLSHIM_CALLS; i++)
        atomic_store(&counts[i], 0);
    atomic_store(&fail_at, n);
    atomic_store(&lazy_mode, lazy);
    atomic_store(&lazy_pending, 0);
}

/* The real functions, found before main (threads call them later). */
#define SHIMMED(X) X(clCreateBuffer) X(clSetKernelArg) X(clGetMemObjectInfo) X(clEnqueueNDRangeKernel) \
    X(clEnqueueWriteBuffer) X(clEnqueueFillBuffer) X(clEnqueueCopyBufferRect) X(clEnqueueReadBuffer) \
    X(clGetExtensionFunctionAddressForPlatform) X(clBuildProgram)
#define DECLARE(name) static __typeof__(name) *real_##name;
SHIMMED(DECLARE)

__attribute__((constructor)) static void find_real(void)
{
#define FIND(name) *(void **)&real_##name = dlsym(RTLD_NEXT, #name);
    SHIMMED(FIND)
}

/* An enqueue fails in place of the lazily failed allocation. */
#define LAZY_FAILURE() \
    if (atomic_exchange(&lazy_pending, 0)) \
        return CL_MEM_OBJECT_ALLOCATION_FAILURE

cl_mem clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr, cl_int *errcode_ret)
{
    unsigned long n = atomic_fetch_add(&counts[CLSHIM_CREATE_BUFFER], 1) + 1;
    if (n == atomic_load(&fail_at)) {
        if (atomic_load(&lazy_mode)) {
            atomic_store(&lazy_pending, 1);
        } else {
            if (errcode_ret)
                *errcode_ret = CL_MEM_OBJECT_ALLOCATION_FAILURE;
            return NULL;
        }
    }
    return real_clCreateBuffer(context, flags, size, host_ptr, errcode_ret);
}

cl_int clBuildProgram(cl_program program, cl_uint n_devices, const cl_device_id *devices, const char *options,
                      void(CL_CALLBACK *notify)(cl_program, void *), void *user)
{
    atomic_fetch_add(&counts[CLSHIM_BUILD_PROGRAM], 1);
    return real_clBuildProgram(program, n_devices, devices, options, notify, user);
}

cl_int clSetKernelArg(cl_kernel kernel, cl_uint index, size_t size, const void *value)
{
    atomic_fetch_add(&counts[CLSHIM_SET_KERNEL_ARG], 1);
    return real_clSetKernelArg(kernel, index, size, value);
}

cl_int clGetMemObjectInfo(cl_mem mem, cl_mem_info name, size_t size, void *value, size_t *size_ret)
{
    atomic_fetch_add(&counts[CLSHIM_GET_MEM_INFO], 1);
    return real_clGetMemObjectInfo(mem, name, size, value, size_ret);
}

cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel kernel, cl_uint dims, const size_t *offset,
                              const size_t *global, const size_t *local, cl_uint n_wait, const cl_event *wait,
                              cl_event *ev)
{
    atomic_fetch_add(&counts[CLSHIM_ENQUEUE_KERNEL], 1);
    LAZY_FAILURE();
    return real_clEnqueueNDRangeKernel(q, kernel, dims, offset, global, local, n_wait, wait, ev);
}

cl_int clEnqueueWriteBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t offset, size_t size,
                            const void *ptr, cl_uint n_wait, const cl_event *wait, cl_event *ev)
{
    LAZY_FAILURE();
    return real_clEnqueueWriteBuffer(q, buf, blocking, offset, size, ptr, n_wait, wait, ev);
}

cl_int clEnqueueFillBuffer(cl_command_queue q, cl_mem buf, const void *pattern, size_t pattern_size, size_t offset,
                           size_t size, cl_uint n_wait, const cl_event *wait, cl_event *ev)
{
    LAZY_FAILURE();
    return real_clEnqueueFillBuffer(q, buf, pattern, pattern_size, offset, size, n_wait, wait, ev);
}

cl_int clEnqueueCopyBufferRect(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *src_origin,
                               const size_t *dst_origin, const size_t *region, size_t src_row_pitch,
                               size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch, cl_uint n_wait,
                               const cl_event *wait, cl_event *ev)
{
    LAZY_FAILURE();
    return real_clEnqueueCopyBufferRect(q, src, dst, src_origin, dst_origin, region, src_row_pitch, src_slice_pitch,
                                        dst_row_pitch, dst_slice_pitch, n_wait, wait, ev);
}

cl_int clEnqueueReadBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t offset, size_t size, void *ptr,
                           cl_uint n_wait, const cl_event *wait, cl_event *ev)
{
    atomic_fetch_add(&counts[CLSHIM_READ_BYTES], size);
    LAZY_FAILURE();
    return real_clEnqueueReadBuffer(q, buf, blocking, offset, size, ptr, n_wait, wait, ev);
}

/* The extension's enqueue, counted; the real one from the platform's answer. */
static _Atomic(clEnqueueCommandBufferKHR_fn) real_enqueue_command_buffer;

static cl_int CL_API_CALL counted_enqueue_command_buffer(cl_uint n_queues, cl_command_queue *queues,
                                                         cl_command_buffer_khr cb, cl_uint n_wait,
                                                         const cl_event *wait, cl_event *ev)
{
    atomic_fetch_add(&counts[CLSHIM_ENQUEUE_COMMAND_BUFFER], 1);
    LAZY_FAILURE();
    return atomic_load(&real_enqueue_command_buffer)(n_queues, queues, cb, n_wait, wait, ev);
}

void *clGetExtensionFunctionAddressForPlatform(cl_platform_id platform, const char *name)
{
    void *f = real_clGetExtensionFunctionAddressForPlatform(platform, name);
    if (!f || strcmp(name, "clEnqueueCommandBufferKHR"))
        return f;
    clEnqueueCommandBufferKHR_fn real;
    *(void **)&real = f;
    atomic_store(&real_enqueue_command_buffer, real); /* one platform per process here */
    clEnqueueCommandBufferKHR_fn counted = counted_enqueue_command_buffer;
    memcpy(&f, &counted, sizeof f); /* POSIX: function and object pointers convert */
    return f;
}
