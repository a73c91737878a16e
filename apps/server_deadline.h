/* Slow clients: libmicrohttpd's timeout counts idle time only, so a client
 * that sends its headers a byte at a time would keep its connection (and its
 * thread) for ever.  Here a connection has timeout_s from its start, or from
 * its last reply, to the end of its next request's headers; past that its
 * socket is shut down and libmicrohttpd closes it. */
#ifndef APP_SERVER_DEADLINE_H
#define APP_SERVER_DEADLINE_H

#include <microhttpd.h>

typedef struct srv_deadlines srv_deadlines;

srv_deadlines *srv_deadlines_start(double timeout_s);
/* MHD_OPTION_NOTIFY_CONNECTION's callback (cls: the srv_deadlines). */
void srv_deadlines_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe);
/* A request's headers came (busy 1), or its reply went (busy 0: the clock starts again). */
void srv_deadlines_busy(struct MHD_Connection *conn, int busy);
/* After MHD_stop_daemon. */
void srv_deadlines_stop(srv_deadlines *d);

#endif
