/* What gmlp_model_load opens: a safetensors file, or a Hugging Face model
 * folder as timm's save_for_hf / push_to_hf_hub write it and `hf download`
 * fetches it (model.safetensors, config.json). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/portable.h"
#include "model/model.h"

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && !strcmp(s + n - t, tail);
}

/* A PyTorch weights file in dir (pytorch_model.bin, a train.py checkpoint),
 * into name; 0 if none. */
static int find_pickle(const char *dir, char *name, size_t size)
{
    static const char *const tails[] = {".bin", ".pth", ".pth.tar", ".pt", ".ckpt"};
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && !found && (e = readdir(d)))
        for (size_t i = 0; i < sizeof tails / sizeof *tails && !found; i++)
            if (ends_with(e->d_name, tails[i])) {
                snprintf(name, size, "%s", e->d_name);
                found = 1;
            }
    if (d)
        closedir(d);
    return found;
}

static int is_file(const char *path, struct stat *sb)
{
    return stat(path, sb) == 0 && S_ISREG(sb->st_mode);
}

/* config.json of folder dir into *hf; *present 0 when there is none.  One
 * that is there but cannot be read (a directory, a dangling link or a link
 * loop) is an error, not a folder without one. */
static gmlp_status read_config(gmlp_context *ctx, const char *dir, gmlp_hf_config *hf, int *present)
{
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof path, "%s/config.json", dir);
    *present = 0;
    if (gmlp_lstat(path, &sb) != 0 && errno == ENOENT)
        return GMLP_OK;
    if (stat(path, &sb) != 0)
        return gmlp_fail(&ctx->err, GMLP_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return gmlp_fail(&ctx->err, GMLP_ERR_IO, "cannot read '%s': not a regular file", path);
    *present = 1;
    if ((unsigned long long)sb.st_size > GMLP_HF_CONFIG_MAX_BYTES) /* before reading it all */
        return gmlp_fail(&ctx->err, GMLP_ERR_FORMAT, "%s: config.json is %lld bytes (at most %zu)", dir,
                         (long long)sb.st_size, GMLP_HF_CONFIG_MAX_BYTES);
    unsigned char *data;
    size_t size;
    GMLP_TRY(gmlp_read_file(ctx, path, &data, &size));
    gmlp_status st = gmlp_hf_config_parse(data, size, hf, &ctx->err);
    free(data);
    if (st != GMLP_OK)
        gmlp_error_prefix(&ctx->err, dir);
    return st;
}

static gmlp_status open_folder(gmlp_context *ctx, const char *dir, const gmlp_model_setup *setup, gmlp_model **out)
{
    char path[4096], pickle[256];
    struct stat sb;
    if (strlen(dir) > sizeof path - 32)
        return gmlp_fail(&ctx->err, GMLP_ERR_IO, "model folder path too long (%zu bytes)", strlen(dir));
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if (!is_file(path, &sb) && find_pickle(dir, pickle, sizeof pickle))
        return gmlp_fail(&ctx->err, GMLP_ERR_UNSUPPORTED,
                         "%s: a model folder with PyTorch weights (%s) but no model.safetensors: a pickle is not "
                         "loaded here; convert it with tools/export_vision.py",
                         dir, pickle);
    if (!is_file(path, &sb))
        return gmlp_fail(&ctx->err, GMLP_ERR_IO,
                         "%s is a directory without model.safetensors (looked for %s and config.json beside it, the "
                         "Hugging Face model folder that timm's save_for_hf writes and `hf download` fetches)",
                         dir, path);
    gmlp_hf_config hf;
    int has_config;
    GMLP_TRY(read_config(ctx, dir, &hf, &has_config));
    unsigned char *data;
    size_t size;
    gmlp_status st = gmlp_read_file(ctx, path, &data, &size);
    if (st == GMLP_OK && (st = gmlp_model_create(ctx, data, size, has_config ? &hf : NULL, setup, out)) != GMLP_OK)
        gmlp_error_prefix(&ctx->err, dir);
    free(data);
    if (has_config)
        gmlp_hf_config_free(&hf);
    return st;
}

gmlp_status gmlp_model_open(gmlp_context *ctx, const char *path, const gmlp_model_setup *setup, gmlp_model **out)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return open_folder(ctx, path, setup, out);
    unsigned char *data;
    size_t size;
    gmlp_status st = gmlp_read_file(ctx, path, &data, &size);
    if (st == GMLP_OK && (st = gmlp_model_create(ctx, data, size, NULL, setup, out)) != GMLP_OK)
        gmlp_error_prefix(&ctx->err, path);
    free(data);
    return st;
}
