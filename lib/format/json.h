/* What the JSON readers (safetensors headers, config.json) share on top of
 * jansson. */
#ifndef GMLP_JSON_H
#define GMLP_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* 0 when the text nests deeper than max_depth.  Older jansson recurses
 * without limit (2.11+ stops at 2048), so absurd nesting is refused before
 * it parses.  On any valid prefix this count is exact, and jansson stops at
 * the first invalid byte, so it bounds the depth jansson can reach. */
int gmlp_json_nesting_ok(const uint8_t *p, size_t n, int max_depth);

/* "an object", "a string", ...: what a value is, for messages. */
const char *gmlp_json_kind(const json_t *v);

#endif
