/* Where a growing generated text may be cut for a streamed chunk. */
#ifndef APP_SERVER_TEXT_H
#define APP_SERVER_TEXT_H

#include <stddef.h>

/* How many of text[0..n) may be sent now: all but a tail that may be the
 * start of a UTF-8 sequence still to be completed, or of one of the n_stops
 * stop sequences (which would end the text before it). */
size_t srv_text_ready(const unsigned char *text, size_t n, char *const *stops, size_t n_stops);

#endif
