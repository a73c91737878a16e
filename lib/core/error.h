/* Error reporting shared by every layer: a status plus a formatted message. */
#ifndef GMLP_ERROR_H
#define GMLP_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#include "gmlp.h"

#define GMLP_ERRMSG_SIZE 4096

#if defined(__GNUC__)
#define GMLP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define GMLP_PRINTF(f, a)
#endif

/* Returns from the calling function when x fails. */
#define GMLP_TRY(x)                                                                                               \
    do {                                                                                                          \
        gmlp_status st_ = (x);                                                                                    \
        if (st_ != GMLP_OK)                                                                                       \
            return st_;                                                                                           \
    } while (0)

/* Writes the message into buf (truncated to size) and returns st. */
gmlp_status gmlp_errf(char *buf, size_t size, gmlp_status st, const char *fmt, ...) GMLP_PRINTF(4, 5);
gmlp_status gmlp_verrf(char *buf, size_t size, gmlp_status st, const char *fmt, va_list ap);

/* The calling thread's error buffer for failures with no context. */
char *gmlp_thread_error(void);

/* Opt-in diagnostics on stderr when GMLP_LOG is set to a non-empty value other than "0". */
void gmlp_log(const char *fmt, ...) GMLP_PRINTF(1, 2);

#endif
