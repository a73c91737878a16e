#include "device.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cl/clerr.h"
#include "core/alloc.h"
#include "core/error.h"

static void query_str(cl_device_id d, cl_device_info what, char *buf, size_t size)
{
    if (clGetDeviceInfo(d, what, size, buf, NULL) != CL_SUCCESS)
        snprintf(buf, size, "?");
    buf[size - 1] = 0;
}

/* The extension queries of the vendors' attribute extensions (their headers'
 * values: cl_ext.h has them only in newer OpenCL-Headers). */
#define GMLP_CL_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#define GMLP_CL_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#define GMLP_CL_GFXIP_MAJOR_AMD 0x404A
#define GMLP_CL_GFXIP_MINOR_AMD 0x404B
#define GMLP_CL_IP_VERSION_INTEL 0x4250

static const struct {
    cl_uint pci_id;
    gmlp_vendor vendor;
    const char *name; /* in CL_DEVICE_VENDOR, where the id is not a PCI id (Apple's, say) */
} vendors[] = {
    {0x10de, GMLP_VENDOR_NVIDIA, "NVIDIA"},
    {0x1002, GMLP_VENDOR_AMD, "Advanced Micro Devices"},
    {0x8086, GMLP_VENDOR_INTEL, "Intel"},
};

static gmlp_vendor vendor_of(cl_device_id d, const char *vendor_name)
{
    cl_uint id = 0;
    clGetDeviceInfo(d, CL_DEVICE_VENDOR_ID, sizeof id, &id, NULL);
    for (size_t i = 0; i < sizeof vendors / sizeof *vendors; i++)
        if (id == vendors[i].pci_id || !strncmp(vendor_name, vendors[i].name, strlen(vendors[i].name)))
            return vendors[i].vendor;
    return GMLP_VENDOR_ANY;
}

int gmlp_device_has_extension(cl_device_id d, const char *name)
{
    size_t n = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &n) != CL_SUCCESS || n == 0)
        return 0;
    char *ext = gmlp_malloc(n + 1);
    int found = 0;
    if (ext && clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, ext, NULL) == CL_SUCCESS) {
        ext[n] = 0;
        /* strtok_r: the caller's own strtok may be halfway through a string */
        char *rest;
        for (char *t = strtok_r(ext, " ", &rest); t && !found; t = strtok_r(NULL, " ", &rest))
            found = !strcmp(t, name);
    }
    free(ext);
    return found;
}

/* Two cl_uint attributes of an extension through fmt into buf; buf unchanged if unanswered. */
static void uint_pair(cl_device_id d, cl_device_info qa, cl_device_info qb, const char *fmt, char *buf, size_t size)
{
    cl_uint a, b;
    if (clGetDeviceInfo(d, qa, sizeof a, &a, NULL) == CL_SUCCESS && clGetDeviceInfo(d, qb, sizeof b, &b, NULL) == CL_SUCCESS)
        snprintf(buf, size, fmt, a, b);
}

static void query_arch(gmlp_devinfo *info)
{
    cl_device_id d = info->device;
    info->arch[0] = 0;
    if (info->vendor_id == GMLP_VENDOR_NVIDIA && gmlp_device_has_extension(d, "cl_nv_device_attribute_query")) {
        uint_pair(d, GMLP_CL_COMPUTE_CAPABILITY_MAJOR_NV, GMLP_CL_COMPUTE_CAPABILITY_MINOR_NV, "sm_%u%u", info->arch,
                  sizeof info->arch);
    } else if (info->vendor_id == GMLP_VENDOR_AMD) {
        if (!strncmp(info->name, "gfx", 3)) /* ROCm: "gfx90a:sramecc+:xnack-" */
            snprintf(info->arch, sizeof info->arch, "%.*s", (int)strcspn(info->name, ":"), info->name);
        else if (gmlp_device_has_extension(d, "cl_amd_device_attribute_query"))
            uint_pair(d, GMLP_CL_GFXIP_MAJOR_AMD, GMLP_CL_GFXIP_MINOR_AMD, "gfx%u.%u", info->arch, sizeof info->arch);
    } else if (info->vendor_id == GMLP_VENDOR_INTEL && (info->type & CL_DEVICE_TYPE_GPU) &&
               gmlp_device_has_extension(d, "cl_intel_device_attribute_query")) {
        cl_uint v; /* a cl_version: major 10 bits, minor 10, patch 12 */
        if (clGetDeviceInfo(d, GMLP_CL_IP_VERSION_INTEL, sizeof v, &v, NULL) == CL_SUCCESS)
            snprintf(info->arch, sizeof info->arch, "%u.%u.%u", v >> 22, v >> 12 & 0x3ff, v & 0xfff);
    }
}

static const struct {
    const char *platform;
    unsigned facts;
} runtimes[] = {
    {"Portable Computing Language", GMLP_RUNTIME_OWN_CACHE | GMLP_RUNTIME_CPU_CLANG | GMLP_RUNTIME_CPU_X86_BUILTINS},
    {"Intel(R) OpenCL", GMLP_RUNTIME_CPU_CLANG},
};

unsigned gmlp_runtime_facts(const gmlp_devinfo *d)
{
    const unsigned cpu_facts = GMLP_RUNTIME_CPU_CLANG | GMLP_RUNTIME_CPU_X86_BUILTINS;
    for (size_t i = 0; i < sizeof runtimes / sizeof *runtimes; i++)
        if (!strcmp(d->platform_name, runtimes[i].platform))
            return runtimes[i].facts & (d->type & CL_DEVICE_TYPE_CPU ? ~0u : ~cpu_facts);
    return 0;
}

void gmlp_devinfo_query(cl_platform_id p, cl_device_id d, gmlp_devinfo *info)
{
    memset(info, 0, sizeof *info);
    info->platform = p;
    info->device = d;
    if (clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof info->platform_name, info->platform_name, NULL))
        snprintf(info->platform_name, sizeof info->platform_name, "?");
    info->platform_name[sizeof info->platform_name - 1] = 0;
    query_str(d, CL_DEVICE_NAME, info->name, sizeof info->name);
    query_str(d, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
    query_str(d, CL_DEVICE_VERSION, info->version, sizeof info->version);
    query_str(d, CL_DRIVER_VERSION, info->driver, sizeof info->driver);
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof info->type, &info->type, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof info->compute_units, &info->compute_units, NULL);
    clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof info->global_mem, &info->global_mem, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof info->max_alloc, &info->max_alloc, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof info->max_wg, &info->max_wg, NULL);
    clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof info->local_mem, &info->local_mem, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof info->max_wi, info->max_wi, NULL);
    clGetDeviceInfo(d, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, sizeof info->native_floats, &info->native_floats, NULL);
    info->vendor_id = vendor_of(d, info->vendor);
    query_arch(info);
}

gmlp_status gmlp_devices_enumerate(gmlp_devinfo **list, size_t *count, gmlp_error *err)
{
    *list = NULL;
    *count = 0;
    cl_uint np = 0;
    cl_int e = clGetPlatformIDs(0, NULL, &np);
    if (e == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (e == CL_SUCCESS && np == 0))
        return gmlp_fail(err, GMLP_ERR_NO_DEVICE,
                         "no OpenCL platform is installed (install an OpenCL driver, e.g. pocl-opencl-icd)");
    if (e != CL_SUCCESS)
        return gmlp_fail_cl(err, "clGetPlatformIDs", e);
    cl_platform_id *plats = gmlp_calloc(np, sizeof *plats);
    if (!plats)
        return gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "out of host memory listing platforms");
    clGetPlatformIDs(np, plats, NULL);
    gmlp_status st = GMLP_OK;
    for (cl_uint p = 0; p < np && st == GMLP_OK; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
            continue;
        cl_device_id *devs = gmlp_calloc(nd, sizeof *devs);
        gmlp_devinfo *grown = gmlp_realloc(*list, (*count + nd) * sizeof **list);
        if (grown)
            *list = grown; /* freed below, also when devs failed */
        if (!devs || !grown) {
            free(devs);
            st = gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "out of host memory listing devices");
            break;
        }
        clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL);
        for (cl_uint i = 0; i < nd; i++) {
            gmlp_devinfo_query(plats[p], devs[i], &(*list)[*count]);
            (*list)[*count].index = *count;
            ++*count;
        }
        free(devs);
    }
    free(plats);
    if (st == GMLP_OK && *count == 0)
        st = gmlp_fail(err, GMLP_ERR_NO_DEVICE, "OpenCL platforms exist but expose no device");
    if (st != GMLP_OK) {
        free(*list);
        *list = NULL;
        *count = 0;
    }
    return st;
}

int gmlp_devinfo_format(const gmlp_devinfo *d, size_t index, char *buf, size_t size)
{
    const char *type = (d->type & CL_DEVICE_TYPE_GPU) ? "gpu" : (d->type & CL_DEVICE_TYPE_CPU) ? "cpu" : "other";
    return snprintf(buf, size, "%zu: %s | %s | %s | %s | %s | driver %s | %u CU | %.1f GiB\n", index, type,
                    d->platform_name, d->vendor, d->name, d->version, d->driver, d->compute_units,
                    (double)d->global_mem / (1024.0 * 1024.0 * 1024.0));
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

static int parse_index(const char *s, size_t *out)
{
    if (!*s)
        return 0;
    size_t v = 0;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s) || v > 1000000)
            return 0;
        v = v * 10 + (size_t)(*s - '0');
    }
    *out = v;
    return 1;
}

static int matches(const gmlp_devinfo *d, const char *spec)
{
    if (!strcasecmp(spec, "gpu"))
        return (d->type & CL_DEVICE_TYPE_GPU) != 0;
    if (!strcasecmp(spec, "cpu"))
        return (d->type & CL_DEVICE_TYPE_CPU) != 0;
    return contains_nocase(d->platform_name, spec) || contains_nocase(d->name, spec) ||
           contains_nocase(d->vendor, spec);
}

gmlp_status gmlp_device_select(const char *spec, gmlp_devinfo *out, gmlp_error *err)
{
    gmlp_devinfo *list;
    size_t n;
    gmlp_status st = gmlp_devices_enumerate(&list, &n, err);
    if (st != GMLP_OK)
        return st;
    long pick = -1;
    size_t idx;
    if (!spec || !*spec) {
        for (size_t i = 0; i < n && pick < 0; i++)
            if (list[i].type & CL_DEVICE_TYPE_GPU)
                pick = (long)i;
        if (pick < 0)
            pick = 0;
    } else if (parse_index(spec, &idx)) {
        if (idx < n)
            pick = (long)idx;
    } else {
        for (size_t i = 0; i < n && pick < 0; i++)
            if (matches(&list[i], spec))
                pick = (long)i;
    }
    if (pick < 0) {
        char avail[GMLP_ERRMSG_SIZE] = "";
        for (size_t i = 0, len = 0; i < n && len < sizeof avail; i++)
            len += (size_t)gmlp_devinfo_format(&list[i], i, avail + len, sizeof avail - len);
        free(list);
        return gmlp_fail(err, GMLP_ERR_NO_DEVICE, "no OpenCL device matches '%s'; available:\n%s", spec, avail);
    }
    *out = list[pick];
    free(list);
    return GMLP_OK;
}

/* The process-wide registry of shared contexts. */
typedef struct shared_ctx {
    cl_device_id device;
    cl_context context;
    int refs;
    struct shared_ctx *next;
} shared_ctx;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static shared_ctx *registry;

gmlp_status gmlp_shared_context_acquire(const gmlp_devinfo *d, cl_context *out, gmlp_error *err)
{
    gmlp_status st = GMLP_OK;
    pthread_mutex_lock(&registry_lock);
    shared_ctx *s = registry;
    while (s && s->device != d->device)
        s = s->next;
    if (!s) {
        s = gmlp_calloc(1, sizeof *s);
        if (!s) {
            st = gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "out of host memory");
            goto out;
        }
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)d->platform, 0};
        cl_int e;
        s->context = clCreateContext(props, 1, &d->device, NULL, NULL, &e);
        if (e != CL_SUCCESS) {
            char call[300];
            snprintf(call, sizeof call, "clCreateContext for '%s'", d->name);
            free(s);
            st = gmlp_fail_cl(err, call, e);
            goto out;
        }
        s->device = d->device;
        s->next = registry;
        registry = s;
    }
    s->refs++;
    *out = s->context;
out:
    pthread_mutex_unlock(&registry_lock);
    return st;
}

void gmlp_shared_context_release(cl_context c)
{
    pthread_mutex_lock(&registry_lock);
    shared_ctx **pp = &registry;
    while (*pp && (*pp)->context != c)
        pp = &(*pp)->next;
    shared_ctx *s = *pp;
    if (s && --s->refs == 0) {
        *pp = s->next;
        clReleaseContext(s->context);
        free(s);
    }
    pthread_mutex_unlock(&registry_lock);
}
