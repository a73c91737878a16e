/* What the programs' SVG pictures share (gmlp-bench --svg's chart,
 * gmlp-classify --eval's confusion matrix): the document's start on a white
 * ground with its title, and text escaped for XML. */
#ifndef APP_SVG_H
#define APP_SVG_H

#include <stdio.h>

/* <svg> of w x h pixels, sans-serif 12 px, a white ground and the title at (x, 24) in 16 px (escaped). */
void app_svg_begin(FILE *f, int w, int h, int x, const char *title);
/* s with <, > and & escaped (file and class names in labels and tooltips). */
void app_svg_escaped(FILE *f, const char *s);

#endif
