/* The POSIX calls the programs make that Windows lacks or spells otherwise,
 * one twin each (portable.c: the POSIX call itself elsewhere). */
#ifndef APP_PORTABLE_H
#define APP_PORTABLE_H

#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#ifndef NAME_MAX
#define NAME_MAX 255 /* Windows' longest file name too */
#endif
#ifndef O_BINARY
#define O_BINARY 0 /* Windows: open() without it translates line ends */
#endif

/* A read-only stream on size (> 0) bytes at data (fmemopen; on Windows a
 * temporary file, deleted on fclose, holding a copy); NULL on failure. */
FILE *app_fmemopen(void *data, size_t size);
/* getline */
ssize_t app_getline(char **line, size_t *cap, FILE *f);
/* strndup */
char *app_strndup(const char *s, size_t n);
/* realpath into buf (PATH_MAX bytes); NULL on failure */
char *app_realpath(const char *path, char *buf);
/* rename, replacing to where it exists (Windows' rename refuses; the library's
 * own twin, lib/core/portable.c, is not exported) */
int app_rename(const char *from, const char *to);
/* lstat; stat on Windows, whose C runtime has no symbolic links to tell apart */
int app_lstat(const char *path, struct stat *st);
/* A new folder /tmp/PREFIXxxxxxx (mkdtemp; on Windows PREFIX, the pid, the
 * clock and a count in the user's temporary folder) into buf; 0 on failure,
 * with errno set. */
int app_mkdtemp(const char *prefix, char *buf, size_t size);
/* The folder of the running program into buf; 0 when unknown. */
int app_exe_dir(char *buf, size_t size);
/* The processors online, at least 1. */
int app_cpu_count(void);
/* handler on SIGINT and SIGTERM; a blocking call it interrupts fails with
 * EINTR rather than restarting (no SA_RESTART).  On Windows, Ctrl+C alone
 * raises it, once: a second one ends the program. */
void app_on_stop_signals(void (*handler)(int));

#endif
