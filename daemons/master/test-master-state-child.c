/* The timer's save of the master's state in a child process
 * (master-state-child.c): what it writes loads in another master, entries
 * journaled while it writes are kept for the next save, a save on the loop
 * stops it, a failure is reported and tried again, and a save waits for a
 * gap between requests. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-run.h"
#include "log.h"
#include "master.h"
#include "rm-rf.h"
#include "test-master-conf.h"

static char tmpdir[256];
static const uint8_t test_key[EXECUTOR_KEY_SIZE] = { 9, 9, 9 };

static void setup(void) {
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-master-state-child.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) {
        (void) rm_rf_at(AT_FDCWD, tmpdir);
}

/* Its state in tmpdir/master-state. */
static Master *master_loaded(void) {
        Master *m = test_master_new(tmpdir, "master", "http_listen = \"\";");

        ck_assert_int_eq(master_state_load(m), 0);
        return m;
}

static void add_worker(Master *m, int n) {
        char id[64], endpoint[128];
        WorkerRegistration reg = { id, "h1", endpoint, "", 4, 4096, NULL, 0, NULL, 0 };

        snprintf(id, sizeof(id), "worker-20261202000000-h%d-1", n);
        snprintf(endpoint, sizeof(endpoint), "ipc:///nonexistent/w%d.sock", n);
        ck_assert_int_ge(cluster_register_worker(m->cluster, &reg, NULL, 0, now_mono_usec(), NULL, NULL), 0);
}

/* An app placed and journaled, as RegisterApplication leaves it. */
static App *add_app(Master *m, int max_cores) {
        AppRegistration reg = { .name = "t", .driver_url = "ipc:///nonexistent/d.sock", .cores_per_executor = 1,
                                .executor_memory_mb = 64, .executor_key = test_key,
                                .executor_key_len = sizeof(test_key), .weight = 1, .max_cores = max_cores };
        App *a = NULL;

        ck_assert_int_eq(master_state_reserve_app_number(m), 0);
        ck_assert_int_eq(cluster_register_app(m->cluster, &reg, now_mono_usec(), &a), 0);
        while (cluster_schedule_step(m->cluster, 1000))
                ;
        ck_assert_int_eq(master_state_app_registered(m, a), 0);
        ck_assert_int_eq(master_state_sync(m), 0);
        return a;
}

static off_t journal_size(void) {
        char path[512];
        struct stat st;

        snprintf(path, sizeof(path), "%s/master-state/apps.journal", tmpdir);
        ck_assert_int_eq(stat(path, &st), 0);
        return st.st_size;
}

static size_t n_apps(Master *m) {
        size_t n = 0;

        for (App *a = cluster_apps(m->cluster); a; a = a->next)
                n++;
        return n;
}

/* Runs m's loop until no child is saving, or ten seconds. */
static void wait_child(Master *m) {
        usec_t end = now_mono_usec() + 10 * USEC_PER_SEC;

        while (m->state_child > 0 && now_mono_usec() < end)
                ck_assert_int_ge(sd_event_run(m->event, 100 * USEC_PER_MSEC), 0);
        ck_assert_int_eq(m->state_child, 0);
}

START_TEST(test_child_save_loads) {
        Master *m = master_loaded(), *m2;
        uint64_t saved;

        for (int i = 1; i <= 3; i++)
                add_worker(m, i);
        add_app(m, 4);
        ck_assert_int_gt(journal_size(), 0);
        master_state_changed(m);
        ck_assert(m->state_dirty);

        saved = m->metrics.state_saves[1];
        ck_assert_int_eq(master_state_child_start(m), 0);
        ck_assert_int_gt(m->state_child, 0);
        ck_assert(!m->state_dirty);
        /* one at a time */
        ck_assert_int_eq(master_state_child_start(m), -EBUSY);
        wait_child(m);
        ck_assert_int_eq(m->state_save_error, 0);
        /* counted for /metrics, with how long it took */
        ck_assert_uint_eq(m->metrics.state_saves[1], saved + 1);
        ck_assert_uint_gt(m->metrics.state_save_duration, 0);
        ck_assert_ptr_null(m->state_child_source);
        /* the snapshot holds the journal's entry */
        ck_assert_int_eq(journal_size(), 0);
        ck_assert(!m->state_dirty);

        m2 = master_loaded();
        ck_assert_int_eq(n_apps(m2), 1);
        ck_assert_int_eq(hashmap_size(cluster_workers(m2->cluster)), 3);
        ck_assert_int_eq(cluster_n_executors(m2->cluster), 4);
        master_free(m2);
        master_free(m);
}
END_TEST

/* A save that falls due while requests keep coming waits for a gap of
 * 5 ms between them, and for no more than 2 s after its first change. */
START_TEST(test_save_delay) {
        const usec_t ms = USEC_PER_MSEC;

        /* a small state: soon */
        ck_assert_uint_eq(master_state_save_delay(0), 50 * ms);
        ck_assert_uint_eq(master_state_save_delay(300), 50 * ms);
        /* 10,000 workers (a few ms of work): a fraction of a second */
        ck_assert_uint_eq(master_state_save_delay(3 * ms), 300 * ms);
        /* 100,000 executors (tens of ms): seconds, at most 10 */
        ck_assert_uint_eq(master_state_save_delay(40 * ms), 4000 * ms);
        ck_assert_uint_eq(master_state_save_delay(1000 * ms), 10000 * ms);
}
END_TEST

/* t0: when the save fell due; the last arg, how long the last fork
 * stopped the loop (0: no fork yet) */
START_TEST(test_save_wait) {
        const usec_t ms = USEC_PER_MSEC, t0 = 1000 * USEC_PER_SEC;

        /* no request for 5 ms: now */
        ck_assert_uint_eq(master_state_save_wait(t0 + 100 * ms, t0 + 95 * ms, t0, 0), 0);
        ck_assert_uint_eq(master_state_save_wait(t0 + 100 * ms, 0, t0, 0), 0);
        /* a request 1 ms ago: at the earliest gap */
        ck_assert_uint_eq(master_state_save_wait(t0 + 100 * ms, t0 + 99 * ms, t0, 0), 4 * ms);
        /* after a fork of 1 ms, a gap is 10 ms */
        ck_assert_uint_eq(master_state_save_wait(t0 + 100 * ms, t0 + 95 * ms, t0, ms), 5 * ms);
        ck_assert_uint_eq(master_state_save_wait(t0 + 100 * ms, t0 + 90 * ms, t0, ms), 0);
        /* ... but not past the deadline: 2 s at least (no fork yet, or a
         * cheap one) */
        ck_assert_uint_eq(master_state_save_wait(t0 + 1998 * ms, t0 + 1998 * ms, t0, 0), 2 * ms);
        ck_assert_uint_eq(master_state_save_wait(t0 + 1998 * ms, t0 + 1998 * ms, t0, ms), 2 * ms);
        ck_assert_uint_eq(master_state_save_wait(t0 + 2000 * ms, t0 + 2000 * ms, t0, ms), 0);
        ck_assert_uint_eq(master_state_save_wait(t0 + 5000 * ms, t0 + 5000 * ms, t0, ms), 0);
        /* a fork of 4 ms: a gap of 40 ms, within 4 s */
        ck_assert_uint_eq(master_state_save_wait(t0 + 3000 * ms, t0 + 2995 * ms, t0, 4 * ms), 35 * ms);
        ck_assert_uint_eq(master_state_save_wait(t0 + 3000 * ms, t0 + 2960 * ms, t0, 4 * ms), 0);
        ck_assert_uint_eq(master_state_save_wait(t0 + 3998 * ms, t0 + 3998 * ms, t0, 4 * ms), 2 * ms);
        ck_assert_uint_eq(master_state_save_wait(t0 + 4000 * ms, t0 + 4000 * ms, t0, 4 * ms), 0);
        /* 15 ms (100,000 executors): 150 ms, within 10 s */
        ck_assert_uint_eq(master_state_save_wait(t0 + 5000 * ms, t0 + 4900 * ms, t0, 15 * ms), 50 * ms);
        ck_assert_uint_eq(master_state_save_wait(t0 + 9998 * ms, t0 + 9998 * ms, t0, 15 * ms), 2 * ms);
        ck_assert_uint_eq(master_state_save_wait(t0 + 10000 * ms, t0 + 10000 * ms, t0, 15 * ms), 0);
        /* a gap of 200 ms at most */
        ck_assert_uint_eq(master_state_save_wait(t0 + 5000 * ms, t0 + 4800 * ms, t0, 100 * ms), 0);
}
END_TEST

/* Runs m's loop for usec as if a request came every millisecond; the
 * time a save began (a child started or the state saved), or 0, and in
 * *ret_gap how long the loop had been without one then. */
static usec_t run_busy(Master *m, usec_t usec, uint64_t saved, usec_t *ret_gap) {
        usec_t end = now_mono_usec() + usec;

        while (now_mono_usec() < end) {
                m->last_request = now_mono_usec();
                ck_assert_int_ge(sd_event_run(m->event, USEC_PER_MSEC), 0);
                if (m->state_child > 0 || m->metrics.state_saves[1] > saved) {
                        *ret_gap = now_mono_usec() - m->last_request;
                        return now_mono_usec();
                }
        }
        return 0;
}

/* The same on the master's loop: requests without a gap hold a save back
 * until 2 s after it fell due (50 ms after the change, for this small
 * state), no longer. */
START_TEST(test_save_waits_on_loop) {
        Master *m = master_loaded();
        uint64_t saved = m->metrics.state_saves[1];
        usec_t changed, began, gap = 0;

        add_worker(m, 1);
        changed = now_mono_usec();
        master_state_changed(m);
        began = run_busy(m, 4 * USEC_PER_SEC, saved, &gap);
        ck_assert_uint_gt(began, 0);
        ck_assert_uint_lt(began - changed, 3 * USEC_PER_SEC);
        /* before the deadline only if this loop itself stalled for 5 ms (a
         * busy machine): a gap between its requests */
        ck_assert_msg(began - changed >= 2 * USEC_PER_SEC - 10 * USEC_PER_MSEC || gap >= 5 * USEC_PER_MSEC,
                      "saved %llu ms after the change, %llu us after a request",
                      (unsigned long long) ((began - changed) / USEC_PER_MSEC), (unsigned long long) gap);
        wait_child(m);
        ck_assert_uint_eq(m->metrics.state_saves[1], saved + 1);
        ck_assert(!m->state_dirty);
        master_free(m);
}
END_TEST

START_TEST(test_entry_during_child_kept) {
        Master *m = master_loaded(), *m2;
        usec_t end;

        add_worker(m, 1);
        add_app(m, 1);
        master_state_changed(m);
        ck_assert_int_eq(master_state_child_start(m), 0);
        /* its pause is kept: the next save's wait for a gap grows with it */
        ck_assert_uint_gt(m->state_fork_pause, 0);
        /* registered after the fork: not in the child's snapshot */
        add_app(m, 1);
        wait_child(m);
        ck_assert_int_eq(m->state_save_error, 0);
        ck_assert_int_gt(journal_size(), 0);
        /* ... so another save follows */
        ck_assert(m->state_dirty);

        m2 = master_loaded();
        ck_assert_int_eq(n_apps(m2), 2);
        master_free(m2);

        /* the timer's next save (in a child) holds both, and empties it */
        end = now_mono_usec() + 10 * USEC_PER_SEC;
        while ((m->state_dirty || m->state_child > 0) && now_mono_usec() < end)
                ck_assert_int_ge(sd_event_run(m->event, 100 * USEC_PER_MSEC), 0);
        ck_assert(!m->state_dirty);
        ck_assert_int_eq(m->state_child, 0);
        ck_assert_int_eq(journal_size(), 0);
        master_free(m);
}
END_TEST

START_TEST(test_save_on_loop_stops_child) {
        Master *m = master_loaded(), *m2;

        add_worker(m, 1);
        add_app(m, 1);
        master_state_changed(m);
        ck_assert_int_eq(master_state_child_start(m), 0);
        add_app(m, 1);
        ck_assert_int_eq(master_state_save(m), 0);
        ck_assert_int_eq(m->state_child, 0);
        ck_assert_ptr_null(m->state_child_source);
        ck_assert_int_eq(journal_size(), 0);

        m2 = master_loaded();
        ck_assert_int_eq(n_apps(m2), 2);
        master_free(m2);
        master_free(m);
}
END_TEST

START_TEST(test_child_failure_retried) {
        Master *m = master_loaded();
        char dir[512], path[600];
        usec_t end;
        int fd;

        add_worker(m, 1);
        master_state_changed(m);
        /* the state directory replaced by a file: the child cannot write */
        snprintf(dir, sizeof(dir), "%s/master-state", tmpdir);
        for (const char *const *f = (const char *const[]) { "state.pb", "apps.journal", NULL }; *f; f++) {
                snprintf(path, sizeof(path), "%s/%s", dir, *f);
                ck_assert_int_eq(unlink(path), 0);
        }
        ck_assert_int_eq(rmdir(dir), 0);
        fd = open(dir, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        close(fd);

        ck_assert_int_eq(master_state_child_start(m), 0);
        wait_child(m);
        ck_assert_int_eq(m->state_save_error, -ENOTDIR);
        ck_assert(m->state_dirty);
        ck_assert_uint_eq(m->metrics.state_saves[0], 1);

        /* the directory back: the retry (in half a second) saves */
        ck_assert_int_eq(unlink(dir), 0);
        ck_assert_int_eq(mkdir(dir, 0750), 0);
        end = now_mono_usec() + 10 * USEC_PER_SEC;
        while ((m->state_save_error < 0 || m->state_child > 0) && now_mono_usec() < end)
                ck_assert_int_ge(sd_event_run(m->event, 100 * USEC_PER_MSEC), 0);
        ck_assert_int_eq(m->state_save_error, 0);
        ck_assert(!m->state_dirty);
        master_free(m);
}
END_TEST

/* Whether pid has ended: gone, or a zombie nobody reaped yet. */
static bool process_ended(pid_t pid) {
        char path[64], buf[256], *p;
        FILE *f;
        size_t n;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return true;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        p = strrchr(buf, ')');
        return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* A master killed while its child writes takes the child with it: an
 * older snapshot must never be renamed over a newer master's.  The child
 * is held where it opens its temporary file, a FIFO here, so the kill
 * lands while it is under way. */
START_TEST(test_child_dies_with_master) {
        char fifo[512];
        pid_t master_pid, child = 0;
        usec_t end;
        int p[2];

        snprintf(fifo, sizeof(fifo), "%s/master-state/.state.pb.tmp", tmpdir);
        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        master_pid = fork();
        ck_assert_int_ge(master_pid, 0);
        if (master_pid == 0) {
                Master *m = master_loaded();

                if (mkfifo(fifo, 0600) < 0)
                        _exit(2);
                master_state_changed(m);
                if (master_state_child_start(m) < 0)
                        _exit(3);
                if (write(p[1], &m->state_child, sizeof(m->state_child)) != sizeof(m->state_child))
                        _exit(4);
                for (;;)
                        pause();
        }
        close(p[1]);
        ck_assert_int_eq(read(p[0], &child, sizeof(child)), sizeof(child));
        close(p[0]);
        ck_assert_int_gt(child, 0);
        ck_assert(!process_ended(child));

        ck_assert_int_eq(kill(master_pid, SIGKILL), 0);
        ck_assert_int_eq(waitpid(master_pid, NULL, 0), master_pid);
        end = now_mono_usec() + 5 * USEC_PER_SEC;
        while (!process_ended(child) && now_mono_usec() < end)
                usleep(10000);
        ck_assert_msg(process_ended(child), "the state writer %d outlived its master", (int) child);
        ck_assert_int_eq(unlink(fifo), 0);
}
END_TEST

static void niceness_work(Master *m, int given_fd, void *reply) {
        int nice_value;
        (void) m, (void) given_fd;

        errno = 0;
        nice_value = getpriority(PRIO_PROCESS, 0);
        if (errno != 0)
                nice_value = -100;
        memcpy(reply, &nice_value, sizeof(nice_value));
}

static int child_nice = -100;

static void niceness_done(Master *m, const void *reply) {
        (void) m;
        if (reply)
                memcpy(&child_nice, reply, sizeof(child_nice));
}

/* The save's child yields to the work the master's host is there for
 * (executors starting, requests): it runs at a higher niceness than the
 * master. */
START_TEST(test_child_runs_nicer) {
        Master *m = master_loaded();
        int ours;

        errno = 0;
        ours = getpriority(PRIO_PROCESS, 0);
        ck_assert_int_eq(errno, 0);
        ck_assert_int_eq(master_state_child_run(m, niceness_work, sizeof(int), -1, niceness_done), 0);
        wait_child(m);
        ck_assert_int_ne(child_nice, -100);
        /* 19 is as nice as it gets: a master already there stays there */
        ck_assert_int_gt(child_nice, ours < 19 ? ours : 18);
        master_free(m);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_child_save_loads,
                test_child_runs_nicer,
                test_entry_during_child_kept,
                test_save_on_loop_stops_child,
                test_child_failure_retried,
                test_child_dies_with_master,
                test_save_delay,
                test_save_wait,
                test_save_waits_on_loop,
                NULL,
        };
        const CheckOptions options = { .setup = setup, .teardown = teardown, .timeout = 30 };

        log_set_max_level(LOG_ERR); /* a master without its sockets warns of each event */
        return check_run_tests("master-state-child", &options, tests);
}
