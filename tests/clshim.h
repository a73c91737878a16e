/* An interposer on the OpenCL calls the library makes: linked into a test
 * program, its definitions come before libOpenCL's (for libgmlp.so too), and
 * each passes on to the real one (dlsym RTLD_NEXT).  It counts the calls and
 * makes a chosen buffer allocation fail.  Extension functions come through
 * clGetExtensionFunctionAddressForPlatform, which it hooks too: the command
 * buffers' enqueue is counted by a wrapper it hands out in place of the real
 * one. */
#ifndef GMLP_CLSHIM_H
#define GMLP_CLSHIM_H

typedef enum clshim_call {
    CLSHIM_CREATE_BUFFER,
    CLSHIM_ENQUEUE_KERNEL,
    CLSHIM_SET_KERNEL_ARG,
    CLSHIM_GET_MEM_INFO,
    CLSHIM_ENQUEUE_COMMAND_BUFFER, /* clEnqueueCommandBufferKHR */
    CLSHIM_READ_BYTES,             /* the bytes clEnqueueReadBuffer reads (a sum, not calls) */
    CLSHIM_BUILD_PROGRAM,          /* clBuildProgram: a kernel compiled, or loaded from a binary */
    CLSHIM_CALLS
} clshim_call;

/* Calls since the last clshim_reset. */
unsigned long clshim_count(clshim_call call);
/* Launches: clEnqueueNDRangeKernel and clEnqueueCommandBufferKHR calls. */
unsigned long clshim_launches(void);
/* Zeroes the counts; no failure armed. */
void clshim_reset(void);
/* The n-th clCreateBuffer from now fails (the counts restart): with
 * CL_MEM_OBJECT_ALLOCATION_FAILURE from the call itself, or, lazy, from the
 * first command enqueued after it, as allocators that commit memory on first
 * use report it. */
void clshim_fail_buffer(unsigned long n, int lazy);

#endif
