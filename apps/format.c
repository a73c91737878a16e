#include "format.h"

#include <string.h>

int app_format_parse(const char *name, app_format *f)
{
    if (!strcmp(name, "jsonl"))
        *f = APP_FORMAT_JSONL;
    else if (!strcmp(name, "csv"))
        *f = APP_FORMAT_CSV;
    else
        return 0;
    return 1;
}

int app_format_of_path(const char *path, app_format *f)
{
    const char *dot = strrchr(path, '.');
    return dot && !strchr(dot, '/') && app_format_parse(dot + 1, f);
}
