/* GET /metrics: requests by endpoint and status, a latency histogram, the
 * batch-size histogram, queue depth, images and tokens served, device time;
 * Prometheus' text format (version 0.0.4). */
#ifndef APP_SERVER_METRICS_H
#define APP_SERVER_METRICS_H

#include <stddef.h>

#include "server.h"

/* Counting the requests of n routes (labelled with their paths) and of none ("other"). */
srv_metrics *srv_metrics_new(const srv_route *routes, size_t n);
void srv_metrics_free(srv_metrics *m);
/* A request answered: its route (NULL: none), status and seconds from its first byte to its last. */
void srv_metrics_request(srv_metrics *m, const srv_route *route, unsigned status, double seconds);
/* A batch of n images sent to the devices. */
void srv_metrics_batch(srv_metrics *m, size_t n);
/* Images classified (errors included), tokens generated and the seconds the LM took for them. */
void srv_metrics_images(srv_metrics *m, size_t n);
void srv_metrics_tokens(srv_metrics *m, size_t n, double seconds);
/* The page, malloc'd (NULL: out of memory); the gauges read now. */
char *srv_metrics_text(srv_metrics *m, size_t queue_depth, double classify_seconds, size_t lm_waiting);

#endif
