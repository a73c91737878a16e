#include "core/portable.h"

#ifdef _WIN32
#include <errno.h>
#include <windows.h>

int gmlp_mkdir(const char *path)
{
    return mkdir(path);
}

int gmlp_rename(const char *from, const char *to)
{
    if (MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
        return 0;
    DWORD e = GetLastError();
    /* else, mostly, a reader holding the file open without sharing its deletion */
    errno = e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND ? ENOENT : EACCES;
    return -1;
}

int gmlp_lstat(const char *path, struct stat *sb)
{
    return stat(path, sb);
}
#else
#include <stdio.h>

int gmlp_mkdir(const char *path)
{
    return mkdir(path, 0755);
}

int gmlp_rename(const char *from, const char *to)
{
    return rename(from, to);
}

int gmlp_lstat(const char *path, struct stat *sb)
{
    return lstat(path, sb);
}
#endif
