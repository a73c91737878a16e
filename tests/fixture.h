/* Reference files of the fixtures made by tools/ (NAME.ref.safetensors),
 * for tests that link the internal library. */
#ifndef GMLP_FIXTURE_H
#define GMLP_FIXTURE_H

#include <string.h>

#include "check.h"
#include "format/safetensors.h"

/* dir/NAME.ref.safetensors parsed into ref; the returned buffer backs ref's
 * tensors (free it after gmlp_st_free).  NULL, with a failure recorded,
 * when it cannot be read. */
static inline unsigned char *fixture_ref(const char *dir, const char *name, gmlp_st_file *ref)
{
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/%s.ref.safetensors", dir, name);
    size_t size;
    unsigned char *buf = check_read_file(path, &size);
    if (!buf || gmlp_st_parse(buf, size, ref, err, sizeof err) != GMLP_OK) {
        CHECK(0, "%s: cannot read reference: %s", path, buf ? err : "unreadable");
        free(buf);
        return NULL;
    }
    return buf;
}

/* An F64 tensor's values, copied out (the data may be unaligned). */
static inline double *fixture_f64(const gmlp_st_tensor *t)
{
    double *d = malloc(t->numel * sizeof *d);
    memcpy(d, t->data, t->numel * sizeof *d);
    return d;
}

#endif
