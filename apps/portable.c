#include "portable.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <direct.h>
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <windows.h>

FILE *app_fmemopen(void *data, size_t size)
{
    char dir[MAX_PATH + 1], path[MAX_PATH + 1];
    if (!GetTempPathA(sizeof dir, dir) || !GetTempFileNameA(dir, "gmlp", 0, path))
        return NULL;
    HANDLE h = CreateFileA(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, CREATE_ALWAYS,
                           FILE_ATTRIBUTE_TEMPORARY | FILE_FLAG_DELETE_ON_CLOSE, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return NULL;
    int fd = _open_osfhandle((intptr_t)h, _O_RDWR | _O_BINARY);
    FILE *f = fd >= 0 ? _fdopen(fd, "w+b") : NULL;
    if (!f) {
        if (fd >= 0)
            _close(fd);
        else
            CloseHandle(h);
        return NULL;
    }
    if (fwrite(data, 1, size, f) != size || fflush(f) || fseek(f, 0, SEEK_SET)) {
        fclose(f);
        return NULL;
    }
    return f;
}

ssize_t app_getline(char **line, size_t *cap, FILE *f)
{
    size_t n = 0;
    for (int c; (c = getc(f)) != EOF;) {
        if (n + 2 > *cap) {
            size_t grown = *cap ? *cap * 2 : 128;
            char *p = realloc(*line, grown);
            if (!p)
                return -1;
            *line = p;
            *cap = grown;
        }
        (*line)[n++] = (char)c;
        if (c == '\n')
            break;
    }
    if (!n)
        return -1;
    (*line)[n] = 0;
    return (ssize_t)n;
}

char *app_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = malloc(len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = 0;
    }
    return d;
}

char *app_realpath(const char *path, char *buf)
{
    struct stat st;
    return stat(path, &st) == 0 ? _fullpath(buf, path, PATH_MAX) : NULL;
}

int app_rename(const char *from, const char *to)
{
    if (MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
        return 0;
    errno = GetLastError() == ERROR_FILE_NOT_FOUND ? ENOENT : EACCES;
    return -1;
}

int app_lstat(const char *path, struct stat *st)
{
    return stat(path, st);
}

int app_mkdtemp(const char *prefix, char *buf, size_t size)
{
    char dir[MAX_PATH + 1];
    if (!GetTempPathA(sizeof dir, dir))
        return 0;
    /* the pid, the clock and a count: _mktemp_s's names (the pid and one of 26 letters) ran out where
     * earlier processes of the same pid had left their folders */
    for (unsigned i = 0; i < 1000; i++) {
        if (snprintf(buf, size, "%s%s%lx-%llx-%x", dir, prefix, (unsigned long)GetCurrentProcessId(),
                     (unsigned long long)GetTickCount64(), i) >= (int)size) {
            errno = ENAMETOOLONG;
            return 0;
        }
        if (_mkdir(buf) == 0)
            return 1;
        if (errno != EEXIST)
            return 0;
    }
    return 0;
}

int app_exe_dir(char *buf, size_t size)
{
    DWORD n = GetModuleFileNameA(NULL, buf, (DWORD)size);
    if (!n || n >= size)
        return 0;
    char *sep = strrchr(buf, '\\');
    if (!sep)
        return 0;
    *sep = 0;
    return 1;
}

int app_cpu_count(void)
{
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwNumberOfProcessors > 0 ? (int)si.dwNumberOfProcessors : 1;
}

void app_on_stop_signals(void (*handler)(int))
{
    signal(SIGINT, handler); /* the C runtime's, from the console's Ctrl+C */
    signal(SIGTERM, handler);
}
#else
#include <errno.h>
#include <unistd.h>

FILE *app_fmemopen(void *data, size_t size)
{
    return fmemopen(data, size, "rb");
}

ssize_t app_getline(char **line, size_t *cap, FILE *f)
{
    return getline(line, cap, f);
}

char *app_strndup(const char *s, size_t n)
{
    return strndup(s, n);
}

char *app_realpath(const char *path, char *buf)
{
    return realpath(path, buf);
}

int app_rename(const char *from, const char *to)
{
    return rename(from, to);
}

int app_lstat(const char *path, struct stat *st)
{
    return lstat(path, st);
}

int app_mkdtemp(const char *prefix, char *buf, size_t size)
{
    if (snprintf(buf, size, "/tmp/%sXXXXXX", prefix) >= (int)size) {
        errno = ENAMETOOLONG;
        return 0;
    }
    return mkdtemp(buf) != NULL;
}

int app_exe_dir(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = 0;
    return 1;
}

int app_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > INT_MAX ? INT_MAX : (int)n;
}

void app_on_stop_signals(void (*handler)(int))
{
    struct sigaction sa = {.sa_handler = handler};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
#endif
