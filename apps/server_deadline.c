#include "server_deadline.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

typedef struct conn_clock {
    srv_deadlines *d;
    int fd;
    int busy;     /* a request between its headers and its reply */
    double since; /* when the clock started */
    struct conn_clock *prev, *next;
} conn_clock;

struct srv_deadlines {
    double timeout_s;
    pthread_mutex_t lock; /* the list, and the sockets' lives: a socket is closed only after it left the list */
    pthread_cond_t cond;
    conn_clock *list;
    int stop;
    pthread_t reaper;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Every quarter second: the connections past their deadline shut down. */
static void *reaper_main(void *arg)
{
    srv_deadlines *d = arg;
    pthread_mutex_lock(&d->lock);
    while (!d->stop) {
        const double t = now();
        for (conn_clock *c = d->list; c; c = c->next)
            if (!c->busy && c->fd >= 0 && t - c->since > d->timeout_s) {
                shutdown(c->fd, SHUT_RDWR);
                c->fd = -1; /* once */
            }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 250 * 1000 * 1000;
        until.tv_sec += until.tv_nsec / 1000000000;
        until.tv_nsec %= 1000000000;
        pthread_cond_timedwait(&d->cond, &d->lock, &until);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

srv_deadlines *srv_deadlines_start(double timeout_s)
{
    srv_deadlines *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->timeout_s = timeout_s;
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->cond, NULL);
    if (!pthread_create(&d->reaper, NULL, reaper_main, d))
        return d;
    pthread_cond_destroy(&d->cond);
    pthread_mutex_destroy(&d->lock);
    free(d);
    return NULL;
}

void srv_deadlines_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    srv_deadlines *d = cls;
    conn_clock *c = *socket_context;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (!info || !(c = calloc(1, sizeof *c)))
            return; /* out of memory: this connection has libmicrohttpd's idle timeout only */
        *c = (conn_clock){.d = d, .fd = info->connect_fd, .since = now()};
        pthread_mutex_lock(&d->lock);
        c->next = d->list;
        if (d->list)
            d->list->prev = c;
        d->list = c;
        pthread_mutex_unlock(&d->lock);
        *socket_context = c;
    } else if (c) {
        pthread_mutex_lock(&d->lock);
        if (c->prev)
            c->prev->next = c->next;
        else
            d->list = c->next;
        if (c->next)
            c->next->prev = c->prev;
        pthread_mutex_unlock(&d->lock);
        free(c);
        *socket_context = NULL;
    }
}

void srv_deadlines_busy(struct MHD_Connection *conn, int busy)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    conn_clock *c = info ? info->socket_context : NULL;
    if (!c)
        return;
    pthread_mutex_lock(&c->d->lock);
    c->busy = busy;
    c->since = now();
    pthread_mutex_unlock(&c->d->lock);
}

void srv_deadlines_stop(srv_deadlines *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->lock);
    d->stop = 1;
    pthread_cond_signal(&d->cond);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->reaper, NULL);
    pthread_cond_destroy(&d->cond);
    pthread_mutex_destroy(&d->lock);
    free(d);
}
