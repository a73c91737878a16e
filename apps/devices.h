/* --device D[,D...]|all as the programs that run on several devices read it. */
#ifndef APP_DEVICES_H
#define APP_DEVICES_H

/* Splits spec into gmlp_context_create specs: "all" is every device
 * gmlp_list_devices shows; no spec is one NULL entry (the library's default).
 * *devices and *n are set also on failure (free each entry, then the array).
 * APP_EXIT_OK, or APP_EXIT_USAGE / APP_EXIT_FAIL with a message naming program. */
int app_split_devices(const char *program, const char *spec, char ***devices, int *n);

#endif
