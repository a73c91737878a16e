#include "error.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t process_lock = PTHREAD_MUTEX_INITIALIZER;
static gmlp_logger process_log = {GMLP_LOG_AUTO, NULL, NULL};
static _Thread_local gmlp_logger thread_log;
static _Thread_local gmlp_error thread_error = {.msg = "no error"}; /* .log: set on use (not constant) */

static void vlog(const gmlp_logger *lg, gmlp_log_level level, const char *fmt, va_list ap)
{
    if (!lg || level > lg->level || level <= GMLP_LOG_NONE)
        return;
    char msg[GMLP_ERRMSG_SIZE];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (lg->cb)
        lg->cb(lg->user, level, msg);
    else
        fprintf(stderr, "gmlp: %s\n", msg);
}

void gmlp_log(const gmlp_logger *lg, gmlp_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(lg, level, fmt, ap);
    va_end(ap);
}

gmlp_status gmlp_vfail(gmlp_error *e, gmlp_status st, const char *fmt, va_list ap)
{
    if (!e)
        return st;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    gmlp_log(e->log, GMLP_LOG_ERROR, "%s", e->msg);
    return st;
}

gmlp_status gmlp_fail(gmlp_error *e, gmlp_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gmlp_vfail(e, st, fmt, ap);
    va_end(ap);
    return st;
}

void gmlp_error_prefix(gmlp_error *e, const char *prefix)
{
    char detail[GMLP_ERRMSG_SIZE];
    memcpy(detail, e->msg, sizeof detail);
    if (snprintf(e->msg, sizeof e->msg, "%s: %s", prefix, detail) >= (int)sizeof e->msg)
        e->msg[sizeof e->msg - 1] = 0; /* truncated: still a valid string */
}

void gmlp_process_logger_set(const gmlp_logger *lg)
{
    pthread_mutex_lock(&process_lock);
    process_log = *lg;
    pthread_mutex_unlock(&process_lock);
}

gmlp_logger gmlp_process_logger(void)
{
    pthread_mutex_lock(&process_lock);
    gmlp_logger lg = process_log;
    pthread_mutex_unlock(&process_lock);
    return lg;
}

gmlp_error *gmlp_thread_error(void)
{
    thread_error.log = &thread_log;
    return &thread_error;
}

gmlp_error *gmlp_thread_error_logging(const gmlp_logger *lg)
{
    thread_log = *lg;
    return gmlp_thread_error();
}
