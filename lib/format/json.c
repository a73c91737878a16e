/* JSON helpers shared by the safetensors header and config.json readers. */
#include "format/json.h"

#include "core/alloc.h"

json_t *gmlp_json_loadb(const char *buf, size_t size, size_t flags, json_error_t *err)
{
    gmlp_alloc_exempt(1);
    json_t *root = json_loadb(buf, size, flags, err);
    gmlp_alloc_exempt(0);
    return root;
}

int gmlp_json_nesting_ok(const uint8_t *p, size_t n, int max_depth)
{
    int depth = 0, in_str = 0;
    for (size_t i = 0; i < n; i++) {
        if (in_str) {
            if (p[i] == '\\')
                i++;
            else if (p[i] == '"')
                in_str = 0;
        } else if (p[i] == '"') {
            in_str = 1;
        } else if (p[i] == '{' || p[i] == '[') {
            if (++depth > max_depth)
                return 0;
        } else if (p[i] == '}' || p[i] == ']') {
            depth--;
        }
    }
    return 1;
}

const char *gmlp_json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}
