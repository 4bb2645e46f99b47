/* Loading the /etc/spark files with libconfig: walk what libconfig parsed, check
 * every setting against the schema (config-schema.c) and collect every
 * problem as "FILE:LINE: message", naming the file the setting is really in.
 *
 * libconfig 1.5 quirks handled here:
 *  - it records an included file under the name written in @include, and
 *    opens it relative to the include directory (the top file's directory);
 *    messages show the path it actually opened;
 *  - it silently wraps decimal integers beyond 32 bits ("5000000000" reads
 *    as 705032704), so an integer that looks wrapped is re-read from the
 *    file's text and then fails the range check as written;
 *  - "cannot open include file" does not say which: it is read from the line. */
#include <fcntl.h>
#include <inttypes.h>
#include <libconfig.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config-internal.h"
#include "executor-env.h"
#include "nng-tls.h"

#define SOURCE_SIZE_MAX (16u * 1024 * 1024)

typedef struct SourceFile {
        const char *raw; /* libconfig's name for it */
        char *path;      /* the path it was read from */
        char *text;      /* read on demand */
        bool text_read;
} SourceFile;

typedef struct Loader {
        const char *path;
        char *include_dir;
        config_t lc;
        bool lc_initialized;
        SourceFile *files;
        size_t n_files;
        char **errors;
        size_t n_errors;
        SparkConfig config;
} Loader;

static void loader_done(Loader *l) {
        if (l->lc_initialized)
                config_destroy(&l->lc);
        for (size_t i = 0; i < l->n_files; i++) {
                free(l->files[i].path);
                free(l->files[i].text);
        }
        free(l->files);
        free(l->include_dir);
        config_strv_free(l->errors);
        config_done(&l->config);
}

static char *dirname_of(const char *path) {
        const char *slash = strrchr(path, '/');

        if (!slash)
                return strdup(".");
        if (slash == path)
                return strdup("/");
        return strndup(path, (size_t) (slash - path));
}

static char *path_join(const char *dir, const char *name) {
        char *p;

        if (streq(dir, "."))
                return strdup(name);
        if (asprintf(&p, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name) < 0)
                return NULL;
        return p;
}

static int loader_map_files(Loader *l) {
        unsigned n = l->lc.filenames ? l->lc.num_filenames : 0;

        l->files = calloc(n ?: 1, sizeof(SourceFile));
        if (!l->files)
                return -ENOMEM;
        for (unsigned i = 0; i < n; i++) {
                SourceFile *f = l->files + l->n_files;

                f->raw = l->lc.filenames[i];
                f->path = i == 0 ? strdup(l->path) : path_join(l->include_dir, f->raw);
                if (!f->path)
                        return -ENOMEM;
                l->n_files++;
        }
        return 0;
}

static SourceFile *source_find(Loader *l, const char *raw) {
        if (!raw)
                return l->n_files > 0 ? l->files : NULL;
        for (size_t i = 0; i < l->n_files; i++)
                if (l->files[i].raw == raw)
                        return l->files + i;
        for (size_t i = 0; i < l->n_files; i++)
                if (streq(l->files[i].raw, raw))
                        return l->files + i;
        return NULL;
}

static const char *source_path(Loader *l, const char *raw) {
        SourceFile *f = source_find(l, raw);

        return f ? f->path : raw ?: l->path;
}

/* The text of a source file, or NULL if it cannot be read now. */
static const char *source_text(Loader *l, const char *raw) {
        SourceFile *f = source_find(l, raw);
        _cleanup_fclose_ FILE *in = NULL;
        struct stat st;
        size_t n;

        if (!f)
                return NULL;
        if (f->text_read)
                return f->text;
        f->text_read = true;

        in = fopen(f->path, "re");
        if (!in || fstat(fileno(in), &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SOURCE_SIZE_MAX)
                return NULL;
        f->text = malloc((size_t) st.st_size + 1);
        if (!f->text)
                return NULL;
        n = fread(f->text, 1, (size_t) st.st_size, in);
        f->text[n] = '\0';
        return f->text;
}

static const char *source_line(Loader *l, const char *raw, int line) {
        const char *p = source_text(l, raw);

        if (line <= 0)
                return NULL;
        for (; p && line > 1; line--) {
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        return p;
}

_printf_(4, 0) static int add_errorv(Loader *l, const char *file, int line, const char *fmt, va_list ap) {
        _cleanup_free_ char *msg = NULL;
        char *e, **errors;
        int r;

        if (vasprintf(&msg, fmt, ap) < 0)
                return -ENOMEM;
        if (line > 0)
                r = asprintf(&e, "%s:%i: %s", file, line, msg);
        else
                r = asprintf(&e, "%s: %s", file, msg);
        if (r < 0)
                return -ENOMEM;

        errors = realloc(l->errors, (l->n_errors + 2) * sizeof(char *));
        if (!errors) {
                free(e);
                return -ENOMEM;
        }
        errors[l->n_errors++] = e;
        errors[l->n_errors] = NULL;
        l->errors = errors;
        return 0;
}

_printf_(4, 5) static int add_error(Loader *l, const char *file, int line, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = add_errorv(l, file, line, fmt, ap);
        va_end(ap);
        return r;
}

int config_loader_error(Loader *l, const config_setting_t *s, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = add_errorv(l,
                       source_path(l, config_setting_source_file(s)),
                       config_setting_source_line(s),
                       fmt,
                       ap);
        va_end(ap);
        return r;
}

static const char *setting_type_name(const config_setting_t *s) {
        switch (config_setting_type(s)) {
        case CONFIG_TYPE_GROUP:
                return "a group";
        case CONFIG_TYPE_INT:
        case CONFIG_TYPE_INT64:
                return "an integer";
        case CONFIG_TYPE_FLOAT:
                return "a float";
        case CONFIG_TYPE_STRING:
                return "a string";
        case CONFIG_TYPE_BOOL:
                return "a boolean";
        case CONFIG_TYPE_ARRAY:
                return "an array";
        case CONFIG_TYPE_LIST:
                return "a list";
        default:
                return "nothing";
        }
}

const char *config_loader_type_name(const config_setting_t *s) {
        return setting_type_name(s);
}

static int type_error(Loader *l, const config_setting_t *s, const char *key, const char *expected) {
        return config_loader_error(l, s, "%s: expected %s, got %s", key, expected, setting_type_name(s));
}

static int value_error(Loader *l, const config_setting_t *s, const char *key, const char *value, const char *why) {
        _cleanup_free_ char *q = NULL;

        if (config_quote(value, &q) < 0)
                return -ENOMEM;
        return config_loader_error(l, s, "%s: invalid value %s: %s", key, q, why);
}

static int parse_error(Loader *l) {
        const char *raw = config_error_file(&l->lc), *text = config_error_text(&l->lc);
        const char *file = source_path(l, raw), *p, *q;
        int line = config_error_line(&l->lc);
        _cleanup_free_ char *name = NULL, *path = NULL;

        if (!text || !streq(text, "cannot open include file"))
                return add_error(l, file, line, "%s", text ?: "syntax error");

        p = source_line(l, raw, line);
        p = p ? strstr(p, "@include") : NULL;
        p = p ? strchr(p, '"') : NULL;
        q = p ? strpbrk(p + 1, "\"\n") : NULL;
        if (!q || *q != '"')
                return add_error(l, file, line, "%s", text);
        name = strndup(p + 1, (size_t) (q - p - 1));
        if (!name)
                return -ENOMEM;
        if (name[0] == '/')
                return add_error(l, file, line,
                                 "@include \"%s\": absolute paths are not supported, name it relative to %s",
                                 name, l->include_dir);
        path = path_join(l->include_dir, name);
        if (!path)
                return -ENOMEM;
        if (access(path, R_OK) >= 0)
                return add_error(l, file, line, "cannot open include file \"%s\"", path);
        return add_error(l, file, line, "cannot open include file \"%s\": %m", path);
}

static bool is_name_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-' || c == '*';
}

/* If the integer libconfig read for s is a 32-bit wrap of what the file
 * says, put the written value in *v and its text in token. */
static void int_from_source(Loader *l, const config_setting_t *s, int64_t *v, char *token, size_t size) {
        const char *name = config_setting_name(s), *start, *p;
        size_t name_len;

        start = source_line(l, config_setting_source_file(s), config_setting_source_line(s));
        if (!start || !name)
                return;
        name_len = strlen(name);
        for (p = strstr(start, name); p; p = strstr(p + name_len, name)) {
                const char *e = p + name_len, *digits;
                long long x;
                char *end;

                if ((p > start && is_name_char(p[-1])) || is_name_char(*e))
                        continue;
                e += strspn(e, " \t\r\n");
                if (*e != '=' && *e != ':')
                        continue;
                e += 1 + strspn(e + 1, " \t\r\n");

                digits = e + (*e == '-');
                errno = 0;
                x = strtoll(e, &end, digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10);
                if (end == e)
                        return;
                if (errno != ERANGE && x >= INT32_MIN && x <= INT32_MAX)
                        return; /* not wrapped */
                if ((int32_t) (uint32_t) (unsigned long long) x != (int32_t) *v)
                        return; /* not what libconfig read there */
                *v = x;
                snprintf(token, size, "%.*s", (int) MIN(end - e, 40), e);
                return;
        }
}

static int load_string(Loader *l, const ConfigKey *k, const config_setting_t *s) {
        char **v = config_key_value(k, &l->config), *copy;
        const char *value, *why;

        if (config_setting_type(s) != CONFIG_TYPE_STRING)
                return type_error(l, s, k->key, "a string");
        value = config_setting_get_string(s);
        why = k->validate ? k->validate(value) : NULL;
        if (why)
                return value_error(l, s, k->key, value, why);

        copy = strdup(value);
        if (!copy)
                return -ENOMEM;
        free(*v);
        *v = copy;
        return 0;
}

static int load_int(Loader *l, const ConfigKey *k, const config_setting_t *s) {
        char token[48] = "";
        int64_t v;

        if (config_setting_type(s) != CONFIG_TYPE_INT && config_setting_type(s) != CONFIG_TYPE_INT64)
                return type_error(l, s, k->key, "an integer");
        v = config_setting_get_int64(s);
        if (config_setting_type(s) == CONFIG_TYPE_INT)
                int_from_source(l, s, &v, token, sizeof(token));
        if (v < k->min || v > k->max) {
                if (!token[0])
                        snprintf(token, sizeof(token), "%" PRId64, v);
                return config_loader_error(l, s, "%s: value %s out of range (%" PRId64 "..%" PRId64 ")",
                                     k->key, token, k->min, k->max);
        }
        *(int64_t *) config_key_value(k, &l->config) = v;
        return 0;
}

static int load_bool(Loader *l, const ConfigKey *k, const config_setting_t *s) {
        if (config_setting_type(s) != CONFIG_TYPE_BOOL)
                return type_error(l, s, k->key, "a boolean");
        *(bool *) config_key_value(k, &l->config) = config_setting_get_bool(s);
        return 0;
}

static bool env_value_is_valid(const char *s) {
        /* As systemd takes Environment= values: newlines and tabs pass. */
        for (; *s; s++)
                if (((unsigned char) *s < ' ' && *s != '\n' && *s != '\t') || *s == 0x7f)
                        return false;
        return true;
}

static int load_env(Loader *l, const ConfigKey *k, config_setting_t *s) {
        char ***v = config_key_value(k, &l->config), **env;
        size_t n_errors = l->n_errors, n = 0;
        int r;

        if (config_setting_type(s) != CONFIG_TYPE_GROUP)
                return type_error(l, s, k->key, "a group");

        env = calloc((size_t) config_setting_length(s) + 1, sizeof(char *));
        if (!env)
                return -ENOMEM;
        for (int i = 0; i < config_setting_length(s); i++) {
                const config_setting_t *e = config_setting_get_elem(s, (unsigned) i);
                const char *name = config_setting_name(e), *value;

                if (!config_env_name_is_valid(name))
                        r = config_loader_error(l, e, "%s.%s: not a valid environment variable name", k->key, name);
                else if (executor_env_name_is_reserved(name, strlen(name)))
                        r = config_loader_error(l, e, "%s.%s: reserved, the worker sets it", k->key, name);
                else if (config_setting_type(e) != CONFIG_TYPE_STRING)
                        r = config_loader_error(l, e, "%s.%s: expected a string, got %s",
                                          k->key, name, setting_type_name(e));
                else if (!env_value_is_valid(value = config_setting_get_string(e))) {
                        _cleanup_free_ char *key = NULL;

                        if (asprintf(&key, "%s.%s", k->key, name) < 0)
                                r = -ENOMEM;
                        else
                                r = value_error(l, e, key, value, "must not contain control characters");
                } else {
                        char *assignment;

                        r = asprintf(&assignment, "%s=%s", name, value) < 0 ? -ENOMEM : 0;
                        if (r >= 0)
                                env[n++] = assignment;
                }
                if (r < 0) {
                        config_strv_free(env);
                        return r;
                }
        }
        if (l->n_errors > n_errors) {
                config_strv_free(env);
                return 0;
        }
        config_strv_free(*v);
        *v = env;
        return 0;
}

static int load_strv(Loader *l, const ConfigKey *k, config_setting_t *s) {
        char ***v = config_key_value(k, &l->config), **strv;
        size_t n_errors = l->n_errors, n = 0;
        int r = 0;

        if (config_setting_type(s) != CONFIG_TYPE_ARRAY && config_setting_type(s) != CONFIG_TYPE_LIST)
                return type_error(l, s, k->key, "an array of strings");

        strv = calloc((size_t) config_setting_length(s) + 1, sizeof(char *));
        if (!strv)
                return -ENOMEM;
        for (int i = 0; i < config_setting_length(s) && r >= 0; i++) {
                const config_setting_t *e = config_setting_get_elem(s, (unsigned) i);
                const char *why;
                char buf[256] = "";

                if (config_setting_type(e) != CONFIG_TYPE_STRING)
                        r = config_loader_error(l, e, "%s[%d]: expected a string, got %s", k->key, i, setting_type_name(e));
                else if (k->validate_element &&
                         (why = k->validate_element(config_setting_get_string(e), buf, sizeof(buf))))
                        r = config_loader_error(l, e, "%s[%d]: %s", k->key, i, why);
                else if (!(strv[n++] = strdup(config_setting_get_string(e))))
                        r = -ENOMEM;
        }
        if (r < 0 || l->n_errors > n_errors) {
                config_strv_free(strv);
                return r < 0 ? r : 0;
        }
        config_strv_free(*v);
        *v = strv;
        return 0;
}

static int load_key(Loader *l, const ConfigKey *k, config_setting_t *s) {
        switch (k->type) {
        case CONFIG_KEY_STRING:
        case CONFIG_KEY_ENDPOINT:
                return load_string(l, k, s);
        case CONFIG_KEY_INT:
                return load_int(l, k, s);
        case CONFIG_KEY_BOOL:
                return load_bool(l, k, s);
        case CONFIG_KEY_ENV:
                return load_env(l, k, s);
        case CONFIG_KEY_STRV:
                return load_strv(l, k, s);
        case CONFIG_KEY_RESOURCES:
                return config_load_resources(l, k, s, config_key_value(k, &l->config));
        case CONFIG_KEY_AMOUNTS:
                return config_load_amounts(l, k, s, config_key_value(k, &l->config));
        default:
                return -EINVAL;
        }
}

static int load_root(Loader *l) {
        config_setting_t *root = config_root_setting(&l->lc);
        int r;

        for (int i = 0; i < config_setting_length(root); i++) {
                config_setting_t *group = config_setting_get_elem(root, (unsigned) i);
                const char *section_name = config_setting_name(group);
                ConfigSection section = config_section_from_string(section_name);

                if (section < 0) {
                        r = config_loader_error(l, group, "unknown %s '%s'",
                                          config_setting_is_group(group) ? "section" : "key", section_name);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!config_setting_is_group(group)) {
                        r = type_error(l, group, section_name, "a group");
                        if (r < 0)
                                return r;
                        continue;
                }
                for (int j = 0; j < config_setting_length(group); j++) {
                        config_setting_t *s = config_setting_get_elem(group, (unsigned) j);
                        const ConfigKey *k = config_key_find(section, config_setting_name(s));

                        if (k)
                                r = load_key(l, k, s);
                        else
                                r = config_loader_error(l, s, "unknown key '%s.%s'",
                                                  section_name, config_setting_name(s));
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* libconfig says only "file I/O error": find out why first. */
static int check_readable(const char *path) {
        _cleanup_close_ int fd = -1;
        struct stat st;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        return 0;
}

/* Where a key is set in the files, NULL if it is not. */
static config_setting_t *setting_of(Loader *l, const char *key) {
        return config_lookup(&l->lc, key);
}

static const char *string_of(Loader *l, const char *key) {
        const ConfigKey *k = config_key_find_by_key(key);

        return k ? *(char *const *) config_key_value_const(k, &l->config) : NULL;
}

/* The sections that may name a certificate and key: the cluster's, and each
 * daemon's own in its place. */
static const ConfigSection tls_owners[] = {
        CONFIG_SECTION_CLUSTER,
        CONFIG_SECTION_MASTER,
        CONFIG_SECTION_WORKER,
        CONFIG_SECTION_DRIVER,
};

/* A certificate needs its key and the CA, and the other way round. */
static int check_tls_pair(Loader *l, ConfigSection s) {
        const char *name = config_section_to_string(s);
        char cert[64], key[64];
        const char *set_key, *cert_value, *key_value;
        config_setting_t *set;
        int r;

        snprintf(cert, sizeof(cert), "%s.tls_cert_file", name);
        snprintf(key, sizeof(key), "%s.tls_key_file", name);
        cert_value = string_of(l, cert);
        key_value = string_of(l, key);
        if (isempty(cert_value) && isempty(key_value))
                return 0;
        set_key = isempty(cert_value) ? key : cert;
        set = setting_of(l, set_key);
        if (!set)
                return 0;

        if (isempty(string_of(l, "cluster.tls_ca_file"))) {
                r = config_loader_error(l, set, "cluster.tls_ca_file: not set, but %s is: TLS needs the CA, the "
                                  "certificate and the key", set_key);
                if (r < 0)
                        return r;
        }
        if (isempty(cert_value) || isempty(key_value))
                return config_loader_error(l, set, "%s: not set, but %s is: TLS needs the CA, the certificate and the key",
                                     isempty(cert_value) ? cert : key, set_key);
        return 0;
}

/* A tls+tcp:// endpoint of section s needs the CA, and one of a daemon
 * (it listens) also a certificate and key, its own or the cluster's.  Only
 * the first such endpoint of a section is named. */
static int check_tls_endpoints(Loader *l, ConfigSection s, bool *ca_reported) {
        const char *name = config_section_to_string(s);
        const ConfigKey *schema, *endpoint = NULL;
        config_setting_t *where;
        TlsSettings t;
        size_t n;
        int r;

        schema = config_schema(&n);
        for (size_t i = 0; i < n && !endpoint; i++)
                if (schema[i].section == s && schema[i].type == CONFIG_KEY_ENDPOINT &&
                    tls_url(*(char *const *) config_key_value_const(schema + i, &l->config)))
                        endpoint = schema + i;
        if (!endpoint)
                return 0;
        where = setting_of(l, endpoint->key);
        if (!where)
                return 0;

        t = config_tls_for(&l->config, s);
        if (isempty(t.ca_file) && !*ca_reported) {
                *ca_reported = true;
                r = config_loader_error(l, where, "cluster.tls_ca_file: must be set: %s is a tls+tcp:// endpoint",
                                  endpoint->key);
                if (r < 0)
                        return r;
        }
        if (s == CONFIG_SECTION_CLUSTER)
                return 0; /* dialed: a CA is enough to verify the server */
        if (isempty(t.cert_file)) {
                r = config_loader_error(l, where, "%s.tls_cert_file (or cluster.tls_cert_file): must be set: %s is a "
                                  "tls+tcp:// endpoint", name, endpoint->key);
                if (r < 0)
                        return r;
        }
        if (isempty(t.key_file)) {
                r = config_loader_error(l, where, "%s.tls_key_file (or cluster.tls_key_file): must be set: %s is a "
                                  "tls+tcp:// endpoint", name, endpoint->key);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The files must be readable by whoever loads the configuration. */
static int check_tls_readable(Loader *l) {
        const ConfigKey *schema;
        size_t n;
        int r;

        schema = config_schema(&n);
        for (size_t i = 0; i < n; i++) {
                const char *value;

                /* tls_ca_file, tls_cert_file, tls_key_file of any section */
                if (schema[i].type != CONFIG_KEY_STRING || strncmp(schema[i].name, "tls_", 4) != 0)
                        continue;
                value = *(char *const *) config_key_value_const(schema + i, &l->config);
                if (isempty(value))
                        continue;
                r = check_readable(value);
                if (r < 0) {
                        _cleanup_free_ char *q = NULL;
                        config_setting_t *where = setting_of(l, schema[i].key);

                        if (!where)
                                continue;
                        if (config_quote(value, &q) < 0)
                                return -ENOMEM;
                        errno = -r;
                        r = config_loader_error(l, where, "%s: cannot read %s: %m", schema[i].key, q);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* The cross-checks of the TLS keys, once every key is valid on its own:
 * a certificate goes with its key and the CA, a tls+tcp:// endpoint needs
 * them, and the files must be readable. */
static int check_tls(Loader *l) {
        bool ca_reported = false;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(tls_owners); i++) {
                r = check_tls_pair(l, tls_owners[i]);
                if (r < 0)
                        return r;
        }
        if (l->n_errors > 0)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(tls_owners); i++) {
                r = check_tls_endpoints(l, tls_owners[i], &ca_reported);
                if (r < 0)
                        return r;
        }
        return check_tls_readable(l);
}

/* Anyone who reaches a master's or driver's request endpoint can run code
 * on every worker: plaintext tcp:// listens on loopback only, unless the
 * operator sets cluster.insecure.  Every listen key of the schema, so that
 * keys added later are covered too. */
static int check_listen_exposure(Loader *l) {
        const ConfigKey *schema;
        size_t n;
        int r;

        if (l->config.cluster.insecure)
                return 0;
        schema = config_schema(&n);
        for (size_t i = 0; i < n; i++) {
                config_setting_t *where;

                if (!config_key_listens_beyond_loopback(schema + i, &l->config))
                        continue;
                where = setting_of(l, schema[i].key);
                if (where)
                        r = config_loader_error(l, where,
                                          "%s: plaintext %s listens beyond loopback; use a tls+tcp:// endpoint, or "
                                          "set cluster.insecure = true",
                                          schema[i].key, *(char *const *) config_key_value_const(schema + i, &l->config));
                else
                        r = add_error(l, l->path, 0,
                                      "%s: the default %s listens beyond loopback; set it, or set "
                                      "cluster.insecure = true",
                                      schema[i].key, *(char *const *) config_key_value_const(schema + i, &l->config));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Executors hold no certificate, so a driver that asks every peer for one
 * (a tls+tcp:// listen) needs a listener for them that does not. */
static int check_executor_listen(Loader *l) {
        config_setting_t *s = setting_of(l, "driver.listen");

        if (!tls_url(l->config.driver.listen) || !isempty(l->config.driver.executor_listen) || !s)
                return 0;
        return config_loader_error(l, s,
                             "driver.executor_listen: must be set: driver.listen is a tls+tcp:// endpoint, which "
                             "asks for a client certificate, and executors have none");
}

/* A dynamic executor user's work dir is a StateDirectory=, which systemd
 * makes below /var/lib only (spark-worker(8)). */
static int check_work_dir(Loader *l) {
        const SparkWorkerConfig *w = &l->config.worker;
        config_setting_t *at;

        if (!streq(w->systemd_bus, "system") || !streq(w->executor_user, "dynamic") ||
            strncmp(w->work_dir, "/var/lib/", strlen("/var/lib/")) == 0)
                return 0;
        at = setting_of(l, "worker.work_dir") ?: setting_of(l, "worker.executor_user");
        if (!at)
                at = setting_of(l, "worker.systemd_bus");
        if (!at)
                return 0;
        return config_loader_error(l, at,
                             "worker.work_dir: \"%s\" is not below /var/lib/, where systemd makes the work "
                             "directories of executor_user \"dynamic\"",
                             w->work_dir);
}

/* libconfig 1.5's scanner calls exit() when it cannot read an included
 * file — a directory, e.g. @include "" names the include directory itself —
 * and blocks on a FIFO.  So look at what each @include names before
 * libconfig opens it, the way libconfig reads it (at the start of a line;
 * the name runs to the next quote, across lines, and ends at a NUL byte;
 * below the include directory), in every file once.  Names that do not
 * exist are left to libconfig's own error. */
typedef struct IncludeScan {
        char *seen[64];
        size_t n_seen;
} IncludeScan;

static int check_include(Loader *l, IncludeScan *scan, const char *file, int line, const char *name);

static int check_includes(Loader *l, IncludeScan *scan, const char *file) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *text = NULL;
        struct stat st;
        size_t n, i = 0;
        int line = 1, r;

        for (size_t k = 0; k < scan->n_seen; k++)
                if (streq(scan->seen[k], file))
                        return 0;
        if (scan->n_seen >= ELEMENTSOF(scan->seen))
                return 0;
        scan->seen[scan->n_seen] = strdup(file);
        if (!scan->seen[scan->n_seen])
                return -ENOMEM;
        scan->n_seen++;

        f = fopen(file, "re");
        if (!f || fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SOURCE_SIZE_MAX)
                return 0;
        text = malloc((size_t) st.st_size + 1);
        if (!text)
                return -ENOMEM;
        n = fread(text, 1, (size_t) st.st_size, f);
        text[n] = 0;

        while (i < n) {
                /* i is at the start of a line */
                size_t j = i + strspn(text + i, " \t");
                const char *q = NULL, *nl;

                if (j + 9 < n && memcmp(text + j, "@include", 8) == 0 && (text[j + 8] == ' ' || text[j + 8] == '\t')) {
                        j += 8;
                        while (j < n && (text[j] == ' ' || text[j] == '\t'))
                                j++;
                        if (j < n && text[j] == '"')
                                q = memchr(text + j + 1, '"', n - j - 1);
                }
                if (q) {
                        _cleanup_free_ char *name = strndup(text + j + 1, (size_t) (q - text - j - 1));
                        if (!name)
                                return -ENOMEM;
                        r = check_include(l, scan, file, line, name);
                        if (r < 0)
                                return r;
                        for (const char *c = text + i; c < q; c++)
                                line += *c == '\n';
                        i = (size_t) (q - text);
                }
                nl = memchr(text + i, '\n', n - i);
                if (!nl)
                        break;
                for (const char *c = text + i; c <= nl; c++)
                        line += *c == '\n';
                i = (size_t) (nl - text) + 1;
        }
        return 0;
}

static int check_include(Loader *l, IncludeScan *scan, const char *file, int line, const char *name) {
        _cleanup_free_ char *inc = NULL, *shown = NULL;
        struct stat st;

        if (asprintf(&inc, "%s/%s", l->include_dir, name) < 0)
                return -ENOMEM;
        if (stat(inc, &st) < 0)
                return 0;
        if (!S_ISREG(st.st_mode))
                return add_error(l, file, line, "@include \"%s\": %s is not a regular file", name, inc);
        /* named as libconfig's messages name it */
        shown = path_join(l->include_dir, name);
        if (!shown)
                return -ENOMEM;
        return check_includes(l, scan, shown);
}

int config_load(const char *path, SparkConfig *ret, char ***ret_errors) {
        _cleanup_(loader_done) Loader l = {};
        int r;

        if (ret_errors)
                *ret_errors = NULL;
        if (isempty(path) || !ret)
                return -EINVAL;
        l.path = path;

        r = check_readable(path);
        if (r < 0) {
                errno = -r;
                if (add_error(&l, path, 0, "cannot open: %m") < 0)
                        return -ENOMEM;
                goto fail;
        }

        l.include_dir = dirname_of(path);
        if (!l.include_dir)
                return -ENOMEM;
        config_init(&l.lc);
        l.lc_initialized = true;
        config_set_include_dir(&l.lc, l.include_dir);

        {
                IncludeScan scan = {};
                r = check_includes(&l, &scan, path);
                for (size_t i = 0; i < scan.n_seen; i++)
                        free(scan.seen[i]);
                if (r < 0)
                        return r;
                if (l.n_errors > 0) {
                        r = -EINVAL;
                        goto fail;
                }
        }

        if (!config_read_file(&l.lc, path)) {
                if (loader_map_files(&l) < 0)
                        return -ENOMEM;
                if (config_error_type(&l.lc) == CONFIG_ERR_FILE_IO) {
                        r = -EIO;
                        if (add_error(&l, path, 0, "cannot read: %s", config_error_text(&l.lc)) < 0)
                                return -ENOMEM;
                } else {
                        r = -EINVAL;
                        if (parse_error(&l) < 0)
                                return -ENOMEM;
                }
                goto fail;
        }
        r = loader_map_files(&l);
        if (r < 0)
                return r;

        r = config_defaults(&l.config);
        if (r < 0)
                return r;
        r = load_root(&l);
        if (r < 0)
                return r;
        if (l.n_errors == 0) {
                r = check_tls(&l);
                if (r < 0)
                        return r;
                r = check_executor_listen(&l);
                if (r < 0)
                        return r;
                r = check_work_dir(&l);
                if (r < 0)
                        return r;
        }
        if (l.n_errors == 0) {
                r = check_listen_exposure(&l);
                if (r < 0)
                        return r;
        }
        if (l.n_errors > 0) {
                r = -EINVAL;
                goto fail;
        }

        *ret = l.config;
        l.config = (SparkConfig) {};
        return 0;

fail:
        if (ret_errors)
                *ret_errors = TAKE_PTR(l.errors);
        return r;
}

char **config_errors_free(char **errors) {
        return config_strv_free(errors);
}

int config_check_tls(const SparkConfig *c, char *error, size_t error_size) {
        TlsSettings checked[ELEMENTSOF(tls_owners)];
        size_t n_checked = 0;
        char why[512];
        int r;

        if (!c)
                return -EINVAL;
        if (!tls_settings_can_dial(&c->cluster.tls))
                return 0;
        /* each distinct certificate once: the cluster's, and each daemon's own */
        for (size_t i = 0; i < ELEMENTSOF(tls_owners); i++) {
                TlsSettings t = config_tls_for(c, tls_owners[i]);
                bool own = tls_owners[i] != CONFIG_SECTION_CLUSTER && t.cert_file != c->cluster.tls.cert_file;
                bool seen = false;

                for (size_t j = 0; j < n_checked && !seen; j++)
                        seen = streq_ptr(checked[j].cert_file, t.cert_file) &&
                               streq_ptr(checked[j].key_file, t.key_file);
                if (seen)
                        continue;
                checked[n_checked++] = t;
                /* a CA alone (daemons with their own certificates) is checked as a dialer's */
                r = nng_tls_check_settings(&t, tls_settings_can_listen(&t), why, sizeof(why));
                if (r < 0) {
                        snprintf(error, error_size, "%s.tls_*: %s",
                                 own ? config_section_to_string(tls_owners[i]) : "cluster", why);
                        return r;
                }
        }
        return 0;
}

int config_check_main(const char *path, FILE *out) {
        _cleanup_(config_done) SparkConfig c = {};
        _cleanup_(config_errors_freep) char **errors = NULL;
        char why[640];
        int r;

        if (!out)
                out = stdout;
        r = config_load(path, &c, &errors);
        if (r >= 0) {
                r = config_check_tls(&c, why, sizeof(why));
                if (r < 0) {
                        fprintf(out, "%s: %s\n", path, why);
                        fflush(out);
                        return EXIT_CONFIG;
                }
                fputs("configuration OK\n", out);
                return 0;
        }
        if (errors && errors[0])
                for (char **e = errors; *e; e++)
                        fprintf(out, "%s\n", *e);
        else
                fprintf(out, "%s: cannot load configuration: %s\n", path ?: "(none)", strerror(-r));
        fflush(out);
        return EXIT_CONFIG;
}

int config_default_path(const char *name, char **ret) {
        const char *dir;
        size_t n;

        if (isempty(name) || strchr(name, '/') || streq(name, ".") || streq(name, "..") || !ret)
                return -EINVAL;
        dir = secure_getenv(CONFIG_DIR_ENV);
        if (isempty(dir))
                dir = CONFIG_DIR_DEFAULT;
        n = strlen(dir);
        while (n > 1 && dir[n - 1] == '/')
                n--;
        if (asprintf(ret, "%.*s%s%s.conf", (int) n, dir, dir[n - 1] == '/' ? "" : "/", name) < 0)
                return -ENOMEM;
        return 0;
}
