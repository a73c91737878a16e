#include "svg.h"

void app_svg_escaped(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else
            fputc(*s, f);
}

void app_svg_begin(FILE *f, int w, int h, int x, const char *title)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
               "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", w, h);
    fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"16\">", x);
    app_svg_escaped(f, title);
    fputs("</text>\n", f);
}
