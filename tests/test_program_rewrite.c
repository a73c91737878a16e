/* The program builder's rewrite (cl/program.h: the wgmma splice's way in,
 * ops/wgmma_splice.h): a solo source's built binary goes through the
 * rewrite and the program is built again from its result, a program of its
 * own beside the unrewritten variant's; a refusal is the build's failure,
 * with the rewrite's message; where the library's cache serves the device
 * (not PoCL, which caches compiled kernels itself), a later context loads
 * the rewritten binary without rewriting when the rewrite accepts it, and
 * rewrites afresh when it refuses it.  Identity rewrites here: the splice
 * itself is test_wgmma_splice's.
 *   test_program_rewrite CACHE_DIR */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cl/context.h"
#include "cl/kernels.h"
#include "cl/program.h"
#include "check.h"

static int rewrites, accepted, accept = 1, refuse;

static gmlp_status identity(gmlp_error *err, const char *bin, size_t len, char **out, size_t *out_len)
{
    rewrites++;
    if (refuse)
        return gmlp_fail(err, GMLP_ERR_BUILD, "test rewrite: refused");
    if (!(*out = malloc(len)))
        return gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "test rewrite: out of memory");
    memcpy(*out, bin, len);
    *out_len = len;
    return GMLP_OK;
}

static bool accepts(const char *bin, size_t len)
{
    accepted++;
    return bin && len && accept;
}

static const gmlp_program_rewrite rw = {"test.rewrite.v1", identity, accepts};
static const gmlp_kernel_spec solo = {"gemm_tiled.cl", "gmlp_gemm"};
static const gmlp_kernel_spec shared = {"layernorm.cl", "gmlp_layernorm"};

static gmlp_context *open_in(const char *dir)
{
    gmlp_context_options o;
    gmlp_context_options_default(&o);
    o.cache_dir = dir;
    return check_context_ex(&o);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_program_rewrite CACHE_DIR\n");
        return 2;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%ld", argv[1], (long)getpid()); /* a cold cache of this run's own */
    const char *defs = "-DGMLP_TEST_REWRITE=1";
    gmlp_context *ctx = open_in(dir);
    const bool cached = !(gmlp_runtime_facts(&ctx->dev) & GMLP_RUNTIME_OWN_CACHE); /* else the implementation's */
    const gmlp_kernel *k = NULL, *plain = NULL, *again = NULL;
    gmlp_status st = gmlp_kernel_get_rewritten(ctx, &solo, defs, &rw, NULL, &k);
    CHECK(st == GMLP_OK && k && k->k, "the rewritten program: %s", gmlp_last_error(ctx));
    CHECK(rewrites == 1, "%d rewrites of the first build, want 1", rewrites);
    CHECK(gmlp_kernel_get(ctx, &solo, defs, NULL, &plain) == GMLP_OK && plain && plain != k &&
              plain->program != (k ? k->program : NULL),
          "the unrewritten variant not a program of its own");
    CHECK(gmlp_kernel_get_rewritten(ctx, &solo, defs, &rw, NULL, &again) == GMLP_OK && again == k && rewrites == 1,
          "the rewritten kernel not kept in the context (%d rewrites)", rewrites);
    CHECK(gmlp_kernel_get_rewritten(ctx, &shared, NULL, &rw, NULL, &again) == GMLP_ERR_INVALID_ARGUMENT,
          "a rewrite of the shared program accepted");
    gmlp_context_destroy(ctx);

    /* a later context: from the cache, accepted (not rewritten), where the library's cache serves */
    ctx = open_in(dir);
    k = NULL;
    CHECK(gmlp_kernel_get_rewritten(ctx, &solo, defs, &rw, NULL, &k) == GMLP_OK && k && k->k, "%s",
          gmlp_last_error(ctx));
    if (cached)
        CHECK(accepted == 1 && rewrites == 1, "cached: %d accepts, %d rewrites, want 1 and 1", accepted, rewrites);
    else
        CHECK(accepted == 0 && rewrites == 2, "%s: %d accepts, %d rewrites, want 0 and 2", ctx->dev.platform_name,
              accepted, rewrites);
    gmlp_context_destroy(ctx);

    /* the cached binary refused on load: rewritten again */
    accept = 0;
    ctx = open_in(dir);
    const int before = rewrites;
    CHECK(gmlp_kernel_get_rewritten(ctx, &solo, defs, &rw, NULL, &k) == GMLP_OK && k && k->k, "%s",
          gmlp_last_error(ctx));
    CHECK(rewrites == before + 1 && (!cached || accepted == 2), "a refused cache entry: %d accepts, %d rewrites",
          accepted, rewrites - before);

    /* a rewrite's refusal: the build's failure, its message kept, no kernel */
    refuse = 1;
    k = NULL;
    st = gmlp_kernel_get_rewritten(ctx, &solo, "-DGMLP_TEST_REWRITE=2", &rw, NULL, &k);
    CHECK(st == GMLP_ERR_BUILD && !k && strstr(gmlp_last_error(ctx), "test rewrite: refused"),
          "a refused rewrite: status %d, message '%s'", (int)st, gmlp_last_error(ctx));
    gmlp_context_destroy(ctx);
    return check_summary("test_program_rewrite");
}
