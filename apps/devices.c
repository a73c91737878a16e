#include "devices.h"

#include <gmlp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "portable.h"

static int all_devices(const char *program, char ***devices, int *n)
{
    size_t need = gmlp_list_devices(NULL, 0);
    char *list = need ? malloc(need + 1) : NULL;
    int count = 0;
    if (list) {
        gmlp_list_devices(list, need + 1);
        for (char *p = list; (p = strchr(p, '\n')); p++)
            count++;
    }
    free(list);
    if (!count) {
        fprintf(stderr, "%s: --device all: %s\n", program, gmlp_last_error(NULL));
        return APP_EXIT_FAIL;
    }
    *devices = calloc((size_t)count, sizeof **devices);
    for (int i = 0; *devices && i < count; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%d", i);
        (*devices)[(*n)++] = strdup(buf);
    }
    return *devices ? APP_EXIT_OK : APP_EXIT_FAIL;
}

int app_split_devices(const char *program, const char *spec, char ***devices, int *n)
{
    *devices = NULL;
    *n = 0;
    if (spec && !strcmp(spec, "all"))
        return all_devices(program, devices, n);
    const char *s = spec ? spec : "";
    *devices = calloc(strlen(s) + 2, sizeof **devices);
    for (const char *p = s; *devices;) {
        size_t len = strcspn(p, ",");
        char *d = app_strndup(p, len);
        for (int i = 0; d && i < *n; i++)
            if (!strcmp((*devices)[i], d)) {
                fprintf(stderr, "%s: --device names '%s' twice\n", program, d);
                free(d);
                return APP_EXIT_USAGE;
            }
        if (spec && !len) {
            fprintf(stderr, "%s: --device '%s' has an empty entry\n", program, spec);
            free(d);
            return APP_EXIT_USAGE;
        }
        /* no -d: the library's default ($GMLP_DEVICE, else the first GPU) */
        (*devices)[(*n)++] = spec ? d : (free(d), NULL);
        if (!p[len])
            break;
        p += len + 1;
    }
    return *devices ? APP_EXIT_OK : APP_EXIT_FAIL;
}
