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

/* json_loadb.  jansson's decoder does not survive a failed allocation: it
 * drops the byte it could not save, then asserts or reads past its buffer
 * (jansson 2.14, akheron/jansson#362), so the allocation-failure tests
 * (lib/core/alloc.h) leave its allocations alone; all other jansson
 * allocations fail in turn. */
json_t *gmlp_json_loadb(const char *buf, size_t size, size_t flags, json_error_t *err);

/* "an object", "a string", ...: what a value is, for messages. */
const char *gmlp_json_kind(const json_t *v);

#endif
