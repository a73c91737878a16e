/* The default on stdout: the file's name, then a bar per class. */
#include <math.h>
#include <string.h>

#include "format.h"

#define BAR_WIDTH 20

void app_text_row(app_rows *o, const char *file, const app_result *r)
{
    app_buf_printf(&o->text, "%s\n", file);
    for (int i = 0; i < r->k; i++) {
        char bar[BAR_WIDTH + 1];
        const double p = r->prob[i];
        const int n = (int)lround(p * BAR_WIDTH);
        memset(bar, '#', (size_t)n);
        memset(bar + n, ' ', (size_t)(BAR_WIDTH - n));
        bar[BAR_WIDTH] = 0;
        app_buf_printf(&o->text, "  %6.2f%%  %s  %s\n", 100 * p, bar, r->labels[i]);
    }
}
