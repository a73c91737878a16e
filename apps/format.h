/* The formats gmlp-classify writes, by name or by the output's extension, and
 * the CSV header that its writer puts first and its --resume reader expects. */
#ifndef APP_FORMAT_H
#define APP_FORMAT_H

typedef enum app_format {
    APP_FORMAT_TEXT,  /* the default on stdout: the file name, then a bar per class */
    APP_FORMAT_JSON,  /* --json: one document at the end ({"model", "device", "results"}) */
    APP_FORMAT_JSONL, /* one JSON object per line */
    APP_FORMAT_CSV,   /* file,rank,index,label,prob,error */
} app_format;

#define APP_CSV_HEADER "file,rank,index,label,prob,error\n"

/* "jsonl" or "csv"; 0 for anything else. */
int app_format_parse(const char *name, app_format *f);
/* By the file's extension (.jsonl, .csv); 0 when it has neither. */
int app_format_of_path(const char *path, app_format *f);

#endif
