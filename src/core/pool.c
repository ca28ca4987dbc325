/*
 * pool.c - the one thread pool helper of the library: run N independent
 * jobs on up to T threads (the calling thread is one of them).  Used to
 * fold many dumps at once (timeline, diff --grew, the HTML report); each
 * job is a whole dump, so the hand-out is a counter under a lock.
 */
#include <pthread.h>
#include <unistd.h>

#include "core.h"

typedef struct pool {
    hscope__job_fn fn;
    void *ctx;
    uint64_t n, next;
    int stop;
    pthread_mutex_t mu;
} pool;

static void *
worker(void *arg)
{
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        uint64_t i = p->next;
        int go = !p->stop && i < p->n;
        if (go)
            p->next++;
        pthread_mutex_unlock(&p->mu);
        if (!go)
            return NULL;
        if (p->fn(p->ctx, i) != 0) {
            pthread_mutex_lock(&p->mu);
            p->stop = 1;
            pthread_mutex_unlock(&p->mu);
        }
    }
}

uint32_t
hscope__cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (n > 1024 ? 1024u : (uint32_t)n) : 1u;
}

int
hscope__pool_run(uint64_t n, uint32_t threads, hscope__job_fn fn, void *ctx)
{
    pool p = { fn, ctx, n, 0, 0, PTHREAD_MUTEX_INITIALIZER };
    if (threads == 0)
        threads = hscope__cores();
    if (threads > n)
        threads = n ? (uint32_t)n : 1u;
    if (threads > HSCOPE__POOL_MAX)
        threads = HSCOPE__POOL_MAX;
    pthread_t th[HSCOPE__POOL_MAX];
    uint32_t started = 0;
    /* the calling thread is the last worker: threads - 1 helpers */
    while (started + 1 < threads && pthread_create(&th[started], NULL, worker, &p) == 0)
        started++;
    worker(&p);
    for (uint32_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&p.mu);
    return p.stop;
}
