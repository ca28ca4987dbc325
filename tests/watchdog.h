/*
 * watchdog.h - no silent hang in a test harness.
 *
 * wd_arm(seconds, what...) before a step that must finish (a load, one
 * fuzz input), wd_disarm() after it.  If the step is still running when its
 * time is up, a background thread prints what it was, then every thread's
 * stack (by running gdb -batch on this process; without gdb, each thread's
 * name, state and kernel wait channel from /proc), and aborts: the test
 * fails with a diagnosis instead of hanging until an outer timeout kills
 * it without one (meson's, CI's; libFuzzer's -timeout prints the main
 * thread only).
 *
 * HEAPSCOPE_WATCHDOG_SCALE (a number, default 1) multiplies every limit,
 * for slow runs (valgrind, a loaded machine); 0 turns the watchdog off.
 * Used by tests/unit/test_handoff.c and the fuzz harnesses; header-only,
 * POSIX threads, Linux for the stack dump.
 */
#ifndef HSCOPE_TEST_WATCHDOG_H
#define HSCOPE_TEST_WATCHDOG_H

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

typedef struct wd_state {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int started, armed;
    unsigned long gen;        /* arms so far: a new arm restarts the clock */
    struct timespec deadline; /* CLOCK_REALTIME, as pthread_cond_timedwait uses */
    double seconds;
    char what[512];
} wd_state;

static wd_state wd_ = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0,
                        { 0, 0 }, 0, "" };

static inline double
wd_scale(void)
{
    const char *e = getenv("HEAPSCOPE_WATCHDOG_SCALE");
    double s = e && *e ? strtod(e, NULL) : 1.0;
    return s >= 0 ? s : 1.0;
}

/* Each thread's name, state and wait channel, from /proc (no gdb). */
static inline void
wd_proc_threads(void)
{
#if defined(__linux__)
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], comm[64] = "", wchan[128] = "", stat[512] = "";
        FILE *f;
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        if ((f = fopen(path, "r"))) {
            if (!fgets(comm, sizeof(comm), f))
                comm[0] = 0;
            fclose(f);
        }
        snprintf(path, sizeof(path), "/proc/self/task/%s/wchan", e->d_name);
        if ((f = fopen(path, "r"))) {
            if (!fgets(wchan, sizeof(wchan), f))
                wchan[0] = 0;
            fclose(f);
        }
        snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
        if ((f = fopen(path, "r"))) {
            if (!fgets(stat, sizeof(stat), f))
                stat[0] = 0;
            fclose(f);
        }
        const char *st = strrchr(stat, ')');
        comm[strcspn(comm, "\n")] = 0;
        fprintf(stderr, "  thread %s (%s): state %c, waiting in %s\n", e->d_name, comm,
                st && st[1] && st[2] ? st[2] : '?', wchan[0] ? wchan : "?");
    }
    closedir(d);
#endif
}

/* Print every thread's stack: gdb attached to this process. */
static inline void
wd_dump_stacks(void)
{
    char pid[32];
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    fflush(stdout);
    fflush(stderr);
    pid_t c = fork();
    if (c == 0) {
        dup2(2, 1); /* everything to stderr, where the failure is */
        execlp("gdb", "gdb", "-batch", "-nx", "-p", pid, "-ex", "set pagination off",
               "-ex", "thread apply all bt", (char *)NULL);
        fprintf(stderr, "watchdog: cannot run gdb (%s); the threads from /proc:\n",
                strerror(errno));
        _exit(127);
    }
    int status = -1;
    if (c > 0) {
        /* gdb gets 60 s; a gdb that hangs too must not hang the test */
        for (int i = 0; i < 600; i++) {
            pid_t w = waitpid(c, &status, WNOHANG);
            if (w == c || (w < 0 && errno != EINTR))
                break;
            struct timespec ts = { 0, 100000000L };
            nanosleep(&ts, NULL);
        }
        if (waitpid(c, &status, WNOHANG) == 0) {
            kill(c, SIGKILL);
            waitpid(c, &status, 0);
        }
    }
    if (c < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        wd_proc_threads();
}

static void *
wd_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&wd_.mu);
    for (;;) {
        while (!wd_.armed)
            pthread_cond_wait(&wd_.cv, &wd_.mu);
        unsigned long gen = wd_.gen;
        struct timespec dl = wd_.deadline;
        int r = 0;
        while (wd_.armed && wd_.gen == gen && r != ETIMEDOUT)
            r = pthread_cond_timedwait(&wd_.cv, &wd_.mu, &dl);
        if (!wd_.armed || wd_.gen != gen)
            continue;
        fprintf(stderr, "\nwatchdog: still running after %.0f s: %s\n"
                        "watchdog: the stack of every thread:\n",
                wd_.seconds, wd_.what);
        pthread_mutex_unlock(&wd_.mu);
        wd_dump_stacks();
        fprintf(stderr, "watchdog: aborting\n");
        abort();
    }
    return NULL;
}

/* Arm for `seconds` (times HEAPSCOPE_WATCHDOG_SCALE); `what` says what
 * runs.  Re-arming restarts the clock. */
static inline void
wd_arm(double seconds, const char *fmt, ...)
{
    double s = seconds * wd_scale();
    if (s <= 0)
        return;
    pthread_mutex_lock(&wd_.mu);
    if (!wd_.started) {
        pthread_t th;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&th, &a, wd_main, NULL) == 0)
            wd_.started = 1;
        pthread_attr_destroy(&a);
#if defined(__linux__) && defined(PR_SET_PTRACER)
        /* let gdb (our child) attach where Yama restricts ptrace */
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(wd_.what, sizeof(wd_.what), fmt, ap);
    va_end(ap);
    clock_gettime(CLOCK_REALTIME, &wd_.deadline);
    wd_.deadline.tv_sec += (time_t)s;
    wd_.deadline.tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
    if (wd_.deadline.tv_nsec >= 1000000000L) {
        wd_.deadline.tv_sec++;
        wd_.deadline.tv_nsec -= 1000000000L;
    }
    wd_.seconds = s;
    wd_.armed = 1;
    wd_.gen++;
    pthread_cond_broadcast(&wd_.cv);
    pthread_mutex_unlock(&wd_.mu);
}

static inline void
wd_disarm(void)
{
    pthread_mutex_lock(&wd_.mu);
    wd_.armed = 0;
    pthread_cond_broadcast(&wd_.cv);
    pthread_mutex_unlock(&wd_.mu);
}

#endif
