/* The corpus of broken model files (tools/make_broken.py): each must be
 * refused with the status its manifest names and a message containing the
 * given fragment (case-insensitive), and must leave the context usable. */
#include <string.h>
#include <strings.h>

#include "check.h"

static gmlp_status status_named(const char *s)
{
    if (!strcmp(s, "FORMAT"))
        return GMLP_ERR_FORMAT;
    if (!strcmp(s, "UNSUPPORTED"))
        return GMLP_ERR_UNSUPPORTED;
    if (!strcmp(s, "IO"))
        return GMLP_ERR_IO;
    return GMLP_OK;
}

static int contains_nocase(const char *hay, const char *needle)
{
    for (size_t n = strlen(needle); *hay; hay++)
        if (!strncasecmp(hay, needle, n))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_broken DIR\n");
        return 2;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/manifest.txt", argv[1]);
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("FAIL: cannot open %s\n", path);
        return 1;
    }
    gmlp_context *ctx = check_context();
    char line[1024], file[512], status[64], fragment[256];
    int cases = 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%511[^\t]\t%63[^\t]\t%255[^\t\n]", file, status, fragment) != 3)
            continue;
        snprintf(path, sizeof path, "%s/%s", argv[1], file);
        gmlp_model *m = (gmlp_model *)1;
        gmlp_status st = gmlp_model_load(ctx, path, &m);
        const char *msg = gmlp_last_error(ctx);
        printf("%-44s %-22s %s\n", file, gmlp_status_string(st), msg);
        CHECK(st == status_named(status) && m == NULL, "%s: expected %s, got %s", file, status,
              gmlp_status_string(st));
        CHECK(contains_nocase(msg, fragment), "%s: message lacks '%s': %s", file, fragment, msg);
        if (st == GMLP_OK)
            gmlp_model_free(m);
        cases++;
    }
    fclose(f);
    CHECK(cases >= 40, "only %d cases in the manifest", cases);
    /* the context still works after all those refusals */
    snprintf(path, sizeof path, "%s/../e2e/gmlp_rgb.safetensors", argv[1]);
    gmlp_model *m;
    CHECK(gmlp_model_load(ctx, path, &m) == GMLP_OK, "valid model after the corpus: %s", gmlp_last_error(ctx));
    gmlp_model_free(m);
    gmlp_context_destroy(ctx);
    return check_summary("test_broken");
}
