/* The wgmma splice (wgmma_splice.h): a line-by-line rewrite of PTX text. */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "ops/wgmma_splice.h"

#define MARK "// gmlp.wgmma.v1"

/* The output, grown as it is written; failed once an allocation failed. */
typedef struct text {
    char *s;
    size_t n, cap;
    bool failed;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (t->n + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->n + n + 1)
            cap *= 2;
        char *s2 = gmlp_realloc(t->s, cap);
        if (!s2) {
            t->failed = true;
            return;
        }
        t->s = s2, t->cap = cap;
    }
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = '\0';
}

static void puts_(text *t, const char *s)
{
    put(t, s, strlen(s));
}

/* A cursor over one line: [p, end). */
typedef struct cursor {
    const char *p, *end;
} cursor;

static void skip_space(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r'))
        c->p++;
}

/* Takes the literal s (after blanks). */
static bool take(cursor *c, const char *s)
{
    skip_space(c);
    const size_t n = strlen(s);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n))
        return false;
    c->p += n;
    return true;
}

/* A PTX register name (after blanks): %, a letter, _ or $, then letters, digits, _ or $; [*b, *b + *n). */
static bool take_register(cursor *c, const char **b, size_t *n)
{
    skip_space(c);
    const char *s = c->p;
    if (c->end - s < 2 || s[0] != '%' || !(isalpha((unsigned char)s[1]) || s[1] == '_' || s[1] == '$'))
        return false;
    const char *e = s + 2;
    while (e < c->end && (isalnum((unsigned char)*e) || *e == '_' || *e == '$'))
        e++;
    *b = s, *n = (size_t)(e - s);
    c->p = e;
    return true;
}

/* An unsigned decimal (after blanks) of at most 9 digits. */
static bool take_number(cursor *c, unsigned *v)
{
    skip_space(c);
    unsigned x = 0;
    int digits = 0;
    while (c->p < c->end && isdigit((unsigned char)*c->p) && digits < 9)
        x = x * 10 + (unsigned)(*c->p++ - '0'), digits++;
    *v = x;
    return digits > 0 && !(c->p < c->end && isdigit((unsigned char)*c->p));
}

static bool at_end(cursor *c)
{
    skip_space(c);
    return c->p == c->end;
}

/* mma's operands, after its verb: "m64nNk16.f32.T.T {d...}, adesc, bdesc, TA, TB" into t. */
static bool splice_mma(cursor *c, text *t)
{
    unsigned n;
    if (!take(c, "m64n") || !take_number(c, &n) || n < 8 || n > 256 || n % 8 || !take(c, "k16.f32."))
        return false;
    const char *type = take(c, "bf16.bf16") ? "bf16.bf16" : take(c, "f16.f16") ? "f16.f16" : NULL;
    if (!type || !take(c, "{"))
        return false;
    char head[128];
    snprintf(head, sizeof head, "{ .reg .pred p; setp.ne.b32 p, 1, 0; wgmma.mma_async.sync.aligned.m64n%uk16.f32.%s {",
             n, type);
    puts_(t, head);
    for (unsigned i = 0; i < n / 2; i++) { /* the accumulators: N/2 floats a work-item */
        const char *r;
        size_t rn;
        if ((i && !take(c, ",")) || !take_register(c, &r, &rn))
            return false;
        if (i)
            puts_(t, ", ");
        put(t, r, rn);
    }
    if (!take(c, "}"))
        return false;
    puts_(t, "}");
    for (int desc = 0; desc < 2; desc++) {
        const char *r;
        size_t rn;
        if (!take(c, ",") || !take_register(c, &r, &rn))
            return false;
        puts_(t, ", ");
        put(t, r, rn);
    }
    puts_(t, ", p, 1, 1");
    for (int tr = 0; tr < 2; tr++) {
        unsigned v;
        if (!take(c, ",") || !take_number(c, &v) || v > 1)
            return false;
        puts_(t, v ? ", 1" : ", 0");
    }
    puts_(t, "; }");
    return at_end(c);
}

/* The marker's instruction into t, after its indentation; false: not recognised. */
static bool splice_marker(cursor *c, text *t, size_t *mmas)
{
    unsigned v;
    if (take(c, "fence")) {
        puts_(t, "wgmma.fence.sync.aligned;");
        return at_end(c);
    }
    if (take(c, "proxy")) {
        puts_(t, "fence.proxy.async.shared::cta;");
        return at_end(c);
    }
    if (take(c, "commit")) {
        puts_(t, "wgmma.commit_group.sync.aligned;");
        return at_end(c);
    }
    if (take(c, "wait")) {
        if (!take_number(c, &v) || v > 7)
            return false;
        char s[48];
        snprintf(s, sizeof s, "wgmma.wait_group.sync.aligned %u;", v);
        puts_(t, s);
        return at_end(c);
    }
    if (take(c, "mma ")) {
        ++*mmas;
        return splice_mma(c, t);
    }
    return false;
}

/* Whether the rest of a .target line, after its architecture, is PTX's
 * target options alone (", texmode_independent" in NVIDIA's OpenCL). */
static bool target_options(cursor c)
{
    static const char *const options[] = {"texmode_independent", "texmode_unified", "map_f64_to_f32", "debug"};
    while (!at_end(&c)) {
        if (!take(&c, ","))
            return false;
        bool known = false;
        for (size_t i = 0; i < sizeof options / sizeof *options && !known; i++) {
            cursor o = c;
            if (take(&o, options[i]) && (at_end(&o) || *o.p == ',' || *o.p == ' ' || *o.p == '\t'))
                known = true, c = o;
        }
        if (!known)
            return false;
    }
    return true;
}

/* The directive "name" opening the line (after blanks), its cursor past it. */
static bool directive(const char *b, const char *e, const char *name, cursor *c)
{
    *c = (cursor){b, e};
    return take(c, name) && c->p < c->end && (*c->p == ' ' || *c->p == '\t');
}

gmlp_status gmlp_wgmma_splice(gmlp_error *err, const char *ptx, size_t len, char **out, size_t *out_len,
                              size_t *mmas)
{
    *out = NULL, *out_len = 0, *mmas = 0;
    const char *nul = memchr(ptx, '\0', len);
    const char *end = nul ? nul : ptx + len;
    text t = {0};
    size_t line = 0, markers = 0;
    bool version = false, target = false;
    for (const char *b = ptx; b < end; line++) {
        const char *nl = memchr(b, '\n', (size_t)(end - b));
        const char *e = nl ? nl : end;
        cursor c = {b, e};
        skip_space(&c);
        const char *indent_end = c.p;
        cursor d;
        if (take(&c, "// gmlp.wgmma.")) {
            if (!take(&c, "v1") || c.p == c.end || (*c.p != ' ' && *c.p != '\t')) {
                free(t.s);
                return gmlp_fail(err, GMLP_ERR_BUILD, "wgmma splice: line %zu: a marker of another splice: %.*s",
                                 line + 1, (int)(e - indent_end > 80 ? 80 : e - indent_end), indent_end);
            }
            if (!version || !target) {
                free(t.s);
                return gmlp_fail(err, GMLP_ERR_BUILD, "wgmma splice: line %zu: a marker before the PTX's %s", line + 1,
                                 version ? ".target" : ".version");
            }
            put(&t, b, (size_t)(indent_end - b));
            if (!splice_marker(&c, &t, mmas)) {
                free(t.s);
                return gmlp_fail(err, GMLP_ERR_BUILD, "wgmma splice: line %zu: a marker it does not recognise: %.*s",
                                 line + 1, (int)(e - indent_end > 200 ? 200 : e - indent_end), indent_end);
            }
            markers++;
        } else if (directive(b, e, ".version", &d)) {
            unsigned major, minor;
            if (version || !take_number(&d, &major) || !take(&d, ".") || !take_number(&d, &minor) || !at_end(&d) ||
                major < 7) {
                free(t.s);
                return gmlp_fail(err, GMLP_ERR_BUILD, "wgmma splice: line %zu: a .version it does not take: %.*s",
                                 line + 1, (int)(e - b > 80 ? 80 : e - b), b);
            }
            version = true;
            char s[40];
            if (major < 8) /* wgmma came with PTX ISA 8.0 */
                major = 8, minor = 0;
            snprintf(s, sizeof s, ".version %u.%u", major, minor);
            puts_(&t, s);
        } else if (directive(b, e, ".target", &d)) {
            skip_space(&d);
            const char *name = d.p;
            while (d.p < d.end && *d.p != ',' && *d.p != ' ' && *d.p != '\t' && *d.p != '\r')
                d.p++;
            const size_t nn = (size_t)(d.p - name);
            const bool sm90 = nn == 5 && !memcmp(name, "sm_90", 5), sm90a = nn == 6 && !memcmp(name, "sm_90a", 6);
            if ((sm90 || sm90a) && !target_options(d)) {
                free(t.s);
                return gmlp_fail(err, GMLP_ERR_BUILD, "wgmma splice: line %zu: a .target it does not take: %.*s",
                                 line + 1, (int)(e - b > 80 ? 80 : e - b), b);
            }
            if (target || !(sm90 || sm90a)) {
                free(t.s);
                return gmlp_fail(err, target ? GMLP_ERR_BUILD : GMLP_ERR_UNSUPPORTED,
                                 "wgmma splice: line %zu: %s%.*s", line + 1,
                                 target ? "a second .target: " : "wgmma needs sm_90 (Hopper); this PTX targets ",
                                 (int)(nn > 40 ? 40 : nn), name);
            }
            target = true;
            put(&t, b, (size_t)(name - b));
            puts_(&t, "sm_90a");
            put(&t, d.p, (size_t)(e - d.p));
        } else {
            put(&t, b, (size_t)(e - b));
        }
        if (nl)
            put(&t, "\n", 1);
        b = nl ? nl + 1 : end;
    }
    if (t.failed) {
        free(t.s);
        return gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "wgmma splice: out of host memory for %zu bytes of PTX", len);
    }
    if (!*mmas) {
        free(t.s);
        *mmas = 0;
        return gmlp_fail(err, GMLP_ERR_BUILD,
                         "wgmma splice: no mma marker in %zu lines of PTX (%zu other markers): the kernel would "
                         "compute nothing",
                         line, markers - *mmas);
    }
    *out = t.s, *out_len = t.n;
    return GMLP_OK;
}

/* Whether s (n bytes) holds needle. */
static bool contains(const char *s, size_t n, const char *needle)
{
    const size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (s[i] == needle[0] && !memcmp(s + i, needle, k))
            return true;
    return false;
}

bool gmlp_wgmma_is_spliced(const char *ptx, size_t len)
{
    return contains(ptx, len, ".target sm_90a") && contains(ptx, len, "wgmma.mma_async.sync.aligned") &&
           !contains(ptx, len, MARK);
}

/* the spliced text with its NUL: NVIDIA's loader takes PTX as a C string */
static gmlp_status rewrite(gmlp_error *err, const char *bin, size_t len, char **out, size_t *out_len)
{
    size_t mmas;
    GMLP_TRY(gmlp_wgmma_splice(err, bin, len, out, out_len, &mmas));
    ++*out_len;
    return GMLP_OK;
}

const gmlp_program_rewrite gmlp_wgmma_rewrite = {"gmlp.wgmma.v1", rewrite, gmlp_wgmma_is_spliced};
