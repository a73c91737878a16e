/* The one error convention of the library: a failing function writes a
 * message into a gmlp_error with gmlp_fail and returns the status.  A
 * context's error is ctx->err (gmlp_last_error(ctx)); calls without a
 * context use the calling thread's (gmlp_last_error(NULL)).  Each error
 * carries the logger its failures are also logged to. */
#ifndef GMLP_ERROR_H
#define GMLP_ERROR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h> /* MinGW-w64: __MINGW_PRINTF_FORMAT */

#include "gmlp.h"

#define GMLP_ERRMSG_SIZE 4096

#if defined(__MINGW_PRINTF_FORMAT) /* MinGW-w64 reads "printf" as msvcrt's, without %zu; its C99 one is this */
#define GMLP_PRINTF(f, a) __attribute__((format(__MINGW_PRINTF_FORMAT, f, a)))
#elif defined(__GNUC__)
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

/* Where diagnostics go: messages of at most level reach cb (NULL: stderr). */
typedef struct gmlp_logger {
    gmlp_log_level level;
    gmlp_log_callback cb;
    void *user;
} gmlp_logger;

typedef struct gmlp_error {
    char msg[GMLP_ERRMSG_SIZE];
    const gmlp_logger *log; /* NULL: failures are not logged */
} gmlp_error;

/* Writes the message into e (truncated to fit), logs it at GMLP_LOG_ERROR and
 * returns st. */
gmlp_status gmlp_fail(gmlp_error *e, gmlp_status st, const char *fmt, ...) GMLP_PRINTF(3, 4);
gmlp_status gmlp_vfail(gmlp_error *e, gmlp_status st, const char *fmt, va_list ap) GMLP_PRINTF(3, 0);
/* Puts "PREFIX: " in front of e's message (e.g. the file a failure concerns). */
void gmlp_error_prefix(gmlp_error *e, const char *prefix);

/* The calling thread's error for calls without a context; _logging also
 * sets the logger its failures go to (lib/api: the process-wide one). */
gmlp_error *gmlp_thread_error(void);
gmlp_error *gmlp_thread_error_logging(const gmlp_logger *lg);
/* The process-wide logger of the calls without a context (gmlp_set_log). */
void gmlp_process_logger_set(const gmlp_logger *lg);
gmlp_logger gmlp_process_logger(void);

void gmlp_log(const gmlp_logger *lg, gmlp_log_level level, const char *fmt, ...) GMLP_PRINTF(3, 4);

#endif
