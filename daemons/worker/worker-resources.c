/* worker.resources: the named resources this worker offers (see worker.h,
 * docs/resources.md).  A discovery script runs once at start, before the
 * worker listens: at most DISCOVERY_TIMEOUT_USEC and
 * RESOURCE_DISCOVERY_OUTPUT_MAX bytes of output, then it is killed.  What
 * it prints is checked by resource_discovery_parse(); anything wrong is
 * logged naming the script, and that resource is not offered — the worker
 * still starts with the rest. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "time-util.h"
#include "worker.h"

#define DISCOVERY_TIMEOUT_USEC (10 * USEC_PER_SEC)

extern char **environ;

/* Runs path with no argument, stdin from /dev/null; its stdout into
 * *ret (NUL-terminated, at most max + 1 bytes: more means too much). */
static int run_discovery(const char *path, size_t max, char **ret, size_t *ret_size, char *why, size_t size) {
        _cleanup_free_ char *buf = NULL;
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none, all;
        int fds[2], status = 0, r;
        size_t n = 0;
        usec_t deadline = now_mono_usec() + DISCOVERY_TIMEOUT_USEC;
        bool timed_out = false;
        pid_t pid;

        buf = malloc(max + 2);
        if (!buf)
                return -ENOMEM;
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawn_file_actions_init(&fa);
        posix_spawnattr_init(&attr);
        /* the worker blocks its signals: the script must not inherit that */
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
        r = posix_spawn(&pid, path, &fa, &attr, (char *[]) { (char *) path, NULL }, environ);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        close(fds[1]);
        if (r != 0) {
                close(fds[0]);
                snprintf(why, size, "cannot run it: %s", strerror(r));
                return -r;
        }

        for (;;) {
                struct pollfd p = { .fd = fds[0], .events = POLLIN };
                usec_t now = now_mono_usec();
                ssize_t k;

                if (now >= deadline) {
                        timed_out = true;
                        break;
                }
                r = poll(&p, 1, (int) ((deadline - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC));
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        break;
                if (r == 0)
                        continue;
                k = read(fds[0], buf + n, max + 1 - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                n += (size_t) k;
                if (n > max)
                        break; /* too much: no need to read on */
        }
        close(fds[0]);
        if (timed_out || n > max)
                (void) kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (timed_out) {
                snprintf(why, size, "it ran longer than %llu s and was killed",
                         (unsigned long long) (DISCOVERY_TIMEOUT_USEC / USEC_PER_SEC));
                return -ETIME;
        }
        if (n > max) {
                snprintf(why, size, "it printed more than %zu bytes", max);
                return -E2BIG;
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                if (WIFEXITED(status))
                        snprintf(why, size, "it exited with status %d", WEXITSTATUS(status));
                else
                        snprintf(why, size, "it was killed by signal %d", WTERMSIG(status));
                return -EIO;
        }
        buf[n] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_size = n;
        return 0;
}

static int discover(const char *name, const char *path, ResourceSet *ret) {
        _cleanup_free_ char *out = NULL;
        char why[512] = "";
        size_t n = 0;
        int r;

        r = run_discovery(path, RESOURCE_DISCOVERY_OUTPUT_MAX, &out, &n, why, sizeof(why));
        if (r == -ENOMEM)
                return log_oom();
        if (r >= 0) {
                r = resource_discovery_parse(out, n, name, ret, why, sizeof(why));
                if (r == -ENOMEM)
                        return log_oom();
        }
        if (r < 0) {
                log_struct(LOG_ERR, LOG_FIELDS(.message_id = SPARK_MESSAGE_RESOURCE_DISCOVERY_FAILED),
                           "Resource %s: discovery script %s: %s; offering none of it", name, path, why);
                return 0;
        }
        return 1;
}

static size_t strv_length(char *const *l) {
        size_t n = 0;

        while (l && l[n])
                n++;
        return n;
}

void worker_resources_done(WorkerManager *w) {
        for (size_t i = 0; w->resources_wire && i < w->n_resources; i++)
                free(w->resources_wire[i].addresses);
        free(w->resources_wire);
        free(w->resources_wire_ptrs);
        w->resources_wire = NULL;
        w->resources_wire_ptrs = NULL;
        resource_sets_free(w->resources, w->n_resources);
        w->resources = NULL;
        w->n_resources = 0;
}

/* The wire view (names and addresses, never device paths) for RegisterWorker. */
static int resources_wire(WorkerManager *w) {
        w->resources_wire = calloc(w->n_resources + 1, sizeof(*w->resources_wire));
        w->resources_wire_ptrs = calloc(w->n_resources + 1, sizeof(*w->resources_wire_ptrs));
        if (!w->resources_wire || !w->resources_wire_ptrs)
                return -ENOMEM;
        for (size_t i = 0; i < w->n_resources; i++) {
                Spark__ResourceAddresses *ra = &w->resources_wire[i];
                const ResourceSet *r = &w->resources[i];

                spark__resource_addresses__init(ra);
                ra->name = r->name;
                ra->n_addresses = r->n_addresses;
                ra->addresses = calloc(r->n_addresses + 1, sizeof(char *));
                if (!ra->addresses)
                        return -ENOMEM;
                for (size_t k = 0; k < r->n_addresses; k++)
                        ra->addresses[k] = r->addresses[k].address;
                w->resources_wire_ptrs[i] = ra;
        }
        return 0;
}

int worker_resources_load(WorkerManager *w) {
        size_t n = strv_length(w->config.worker.resources);
        char offered[1024] = "";
        size_t o = 0;
        int r;

        w->resources = calloc(n + 1, sizeof(*w->resources));
        if (!w->resources)
                return log_oom();
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *buf = NULL;
                const char *discovery = NULL;
                ResourceSet set = {};
                char why[256];

                /* checked when the configuration was loaded */
                r = resource_entry_parse(w->config.worker.resources[i], &buf, &discovery, &set, why, sizeof(why));
                if (r == -ENOMEM)
                        return log_oom();
                if (r < 0) {
                        log_error("worker.resources: %s", why);
                        continue;
                }
                if (discovery) {
                        r = discover(buf, discovery, &set);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                continue;
                }
                w->resources[w->n_resources++] = set;
                o += (size_t) snprintf(offered + MIN(o, sizeof(offered) - 1), sizeof(offered) - MIN(o, sizeof(offered) - 1),
                                       "%s%s: %zu", o ? ", " : "", set.name, set.n_addresses);
        }
        r = resources_wire(w);
        if (r < 0)
                return log_oom();
        if (w->n_resources > 0 || w->config.worker.labels)
                log_struct(LOG_INFO, LOG_FIELDS(.message_id = SPARK_MESSAGE_RESOURCES_OFFERED),
                           "Offering %s%s%zu labels", offered, o ? "; " : "", strv_length(w->config.worker.labels));
        return 0;
}

static const ResourceSet *resource_find(WorkerManager *w, const char *name) {
        for (size_t i = 0; i < w->n_resources; i++)
                if (streq(w->resources[i].name, name))
                        return &w->resources[i];
        return NULL;
}

int worker_resources_for_launch(WorkerManager *w, const Spark__LaunchExecutor *le, char ***ret_env,
                                char ***ret_devices, char *why, size_t size) {
        char **env = NULL, **devices = NULL;
        size_t n_devices = 0, n_env = 0;
        int r = 0;

        /* never trust a count or a name from the network */
        if (le->n_resources > RESOURCE_KINDS_MAX) {
                snprintf(why, size, "more than %d named resources", RESOURCE_KINDS_MAX);
                return -E2BIG;
        }
        env = calloc(le->n_resources + 1, sizeof(char *));
        devices = calloc(RESOURCE_KINDS_MAX * RESOURCE_ADDRESSES_MAX * RESOURCE_DEVICES_MAX + 1, sizeof(char *));
        if (!env || !devices) {
                r = -ENOMEM;
                goto fail;
        }
        for (size_t i = 0; i < le->n_resources; i++) {
                const Spark__ResourceAddresses *ra = le->resources[i];
                const ResourceSet *set = ra && resource_name_is_valid(ra->name) ? resource_find(w, ra->name) : NULL;
                char name[RESOURCE_NAME_MAX + 32];
                char *value = NULL;
                size_t len = 0;
                FILE *f;

                if (!set) {
                        snprintf(why, size, "named resource \"%.32s\" is not offered here", ra && ra->name ? ra->name : "");
                        r = -EINVAL;
                        goto fail;
                }
                for (size_t j = 0; j < i; j++)
                        if (streq(le->resources[j]->name, ra->name)) {
                                snprintf(why, size, "named resource %s given twice", ra->name);
                                r = -EINVAL;
                                goto fail;
                        }
                if (ra->n_addresses < 1 || ra->n_addresses > set->n_addresses) {
                        snprintf(why, size, "%zu addresses of %s, %zu offered", ra->n_addresses, ra->name,
                                 set->n_addresses);
                        r = -EINVAL;
                        goto fail;
                }
                (void) resource_env_name(ra->name, name, sizeof(name));
                f = open_memstream(&value, &len);
                if (!f) {
                        r = -ENOMEM;
                        goto fail;
                }
                fprintf(f, "%s=", name);
                for (size_t k = 0; k < ra->n_addresses; k++) {
                        char *const *devs;
                        bool offered = false, twice = false;

                        for (size_t x = 0; x < set->n_addresses && !offered; x++)
                                offered = streq(set->addresses[x].address, ra->addresses[k]);
                        for (size_t x = 0; x < k && !twice; x++)
                                twice = streq(ra->addresses[x], ra->addresses[k]);
                        if (!offered || twice) {
                                fclose(f);
                                free(value);
                                snprintf(why, size, "address \"%.64s\" of %s is %s", ra->addresses[k], ra->name,
                                         twice ? "given twice" : "not offered here");
                                r = -EINVAL;
                                goto fail;
                        }
                        fprintf(f, "%s%s", k ? "," : "", ra->addresses[k]);
                        devs = resource_set_devices(set, ra->addresses[k]);
                        for (char *const *d = devs; d && *d; d++)
                                devices[n_devices++] = *d;
                }
                if (fclose(f) != 0) {
                        free(value);
                        r = -ENOMEM;
                        goto fail;
                }
                env[n_env++] = value;
        }
        *ret_env = env;
        *ret_devices = devices;
        return 0;
fail:
        for (size_t i = 0; env && i < n_env; i++)
                free(env[i]);
        free(env);
        free(devices);
        if (r == -ENOMEM)
                snprintf(why, size, "out of memory");
        return r;
}
