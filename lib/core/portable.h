/* The POSIX file-system calls the library makes that Windows spells
 * otherwise, one twin each (portable.c); elsewhere the library calls these. */
#ifndef GMLP_PORTABLE_H
#define GMLP_PORTABLE_H

#include <sys/stat.h>

/* mkdir(path, 0755); 0 or -1 with errno set, as mkdir. */
int gmlp_mkdir(const char *path);
/* rename(from, to), replacing to atomically where it exists (POSIX rename;
 * Windows' rename fails there); 0 or -1. */
int gmlp_rename(const char *from, const char *to);
/* lstat; stat on Windows, whose C runtime has no symbolic links to tell apart. */
int gmlp_lstat(const char *path, struct stat *sb);

#endif
