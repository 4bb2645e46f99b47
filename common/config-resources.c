/* worker.resources and driver.executor_resources: loading the two groups
 * from libconfig into the strings SparkConfig keeps (config.h), and writing
 * them back in libconfig's syntax.  Every name, address, device path and
 * count is checked here, so that a daemon never sees one it would refuse. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-internal.h"
#include "resources.h"
#include "memstream-util.h"

static bool path_is_acceptable(const char *s) {
        if (s[0] != '/' || strlen(s) >= 4096)
                return false;
        for (; *s; s++)
                if ((unsigned char) *s < ' ' || *s == 0x7f)
                        return false;
        return true;
}

/* Appends ",".join(the strings of array a) to f, checking each with valid().
 * Returns 1 if it recorded an error in the file, 0, or -ENOMEM. */
static int load_string_array(Loader *l, const char *key, const char *member, const config_setting_t *a,
                             bool (*valid)(const char *), size_t max, FILE *f, int *ret_n) {
        int n = config_setting_length(a), r = 0;
        bool bad = false;

        if (config_setting_type(a) != CONFIG_TYPE_ARRAY && config_setting_type(a) != CONFIG_TYPE_LIST)
                return config_loader_error(l, a, "%s.%s: expected an array of strings, got %s", key, member,
                                           config_loader_type_name(a)) ?: 1;
        if ((size_t) n > max)
                return config_loader_error(l, a, "%s.%s: more than %zu entries", key, member, max) ?: 1;
        for (int i = 0; i < n && r >= 0; i++) {
                const config_setting_t *e = config_setting_get_elem(a, (unsigned) i);
                const char *s = config_setting_get_string(e);

                if (config_setting_type(e) != CONFIG_TYPE_STRING)
                        r = config_loader_error(l, e, "%s.%s[%d]: expected a string, got %s", key, member, i,
                                                config_loader_type_name(e)), bad = true;
                else if (!valid(s)) {
                        /* quoted as read: a line break or a quote in it
                         * must not break the message's one line */
                        _cleanup_free_ char *q = NULL;

                        if (config_quote(s, &q) < 0)
                                return -ENOMEM;
                        bad = true, r = config_loader_error(l, e, "%s.%s[%d]: invalid %s %.300s", key, member, i,
                                                streq(member, "devices") ? "device path (a node below /dev/)"
                                                                         : "address (letters, digits and ._:-)",
                                                q);
                } else
                        fprintf(f, "%s%s", i ? "," : "", s);
        }
        *ret_n = n;
        return r < 0 ? r : bad;
}

/* One NAME = { ... } of worker.resources, as an entry string; NULL in
 * *ret if the file is wrong there (the error is recorded). */
static int load_one_resource(Loader *l, const ConfigKey *k, const config_setting_t *g, char **ret) {
        const char *key = k->key, *name = config_setting_name(g);
        const config_setting_t *addresses = NULL, *devices = NULL, *discovery = NULL;
        _cleanup_free_ char *entry = NULL, *subkey = NULL, *buf = NULL;
        size_t size = 0;
        int r = 0, n_addresses = 0, n_devices = 0;
        FILE *f;

        *ret = NULL;
        if (asprintf(&subkey, "%s.%s", key, name) < 0)
                return -ENOMEM;
        if (!resource_name_is_valid(name))
                return config_loader_error(l, g, "%s: invalid resource name: lower-case letters, digits and _ "
                                                 "starting with a letter, at most %d bytes",
                                           subkey, RESOURCE_NAME_MAX);
        if (config_setting_type(g) != CONFIG_TYPE_GROUP)
                return config_loader_error(l, g, "%s: expected a group, got %s", subkey, config_loader_type_name(g));
        for (int i = 0; i < config_setting_length(g); i++) {
                const config_setting_t *m = config_setting_get_elem(g, (unsigned) i);
                const char *member = config_setting_name(m);

                if (streq(member, "addresses"))
                        addresses = m;
                else if (streq(member, "devices"))
                        devices = m;
                else if (streq(member, "discovery"))
                        discovery = m;
                else
                        return config_loader_error(l, m, "unknown key '%s.%s'", subkey, member);
        }

        if (discovery) {
                const char *path = config_setting_get_string(discovery);

                if (addresses || devices)
                        return config_loader_error(l, g, "%s: discovery and addresses/devices exclude each other",
                                                   subkey);
                if (config_setting_type(discovery) != CONFIG_TYPE_STRING)
                        return config_loader_error(l, discovery, "%s.discovery: expected a string, got %s", subkey,
                                                   config_loader_type_name(discovery));
                if (!path_is_acceptable(path))
                        return config_loader_error(l, discovery,
                                                   "%s.discovery: must be an absolute path without control characters",
                                                   subkey);
                if (asprintf(ret, "%s\tdiscovery\t%s", name, path) < 0)
                        return -ENOMEM;
                return 0;
        }
        if (!addresses)
                return config_loader_error(l, g, "%s: needs addresses = [ ... ] or discovery = \"/path\"", subkey);

        f = open_memstream(&entry, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, "%s\taddresses\t", name);
        r = load_string_array(l, subkey, "addresses", addresses, resource_address_is_valid, RESOURCE_ADDRESSES_MAX, f,
                              &n_addresses);
        if (r == 0 && devices) {
                fputs("\tdevices\t", f);
                r = load_string_array(l, subkey, "devices", devices, resource_device_is_valid, RESOURCE_ADDRESSES_MAX,
                                      f, &n_devices);
        }
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r != 0)
                return r < 0 ? r : 0;
        if (devices && n_devices != n_addresses)
                return config_loader_error(l, devices, "%s.devices: %d device paths for %d addresses (one each)",
                                           subkey, n_devices, n_addresses);
        if (n_addresses == 0)
                return config_loader_error(l, addresses, "%s.addresses: empty", subkey);
        {
                const char *discovery_path;
                ResourceSet set = {};
                char err[256];

                r = resource_entry_parse(entry, &buf, &discovery_path, &set, err, sizeof(err));
                resource_set_done(&set);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return config_loader_error(l, addresses, "%s: %s", subkey, err);
        }
        *ret = TAKE_PTR(entry);
        return 0;
}

/* One NAME = AMOUNT of driver.executor_resources, as "NAME=AMOUNT"; NULL in
 * *ret if the file is wrong there (the error is recorded). */
static int load_one_amount(Loader *l, const ConfigKey *k, const config_setting_t *e, char **ret) {
        const char *name = config_setting_name(e);
        long long x;

        *ret = NULL;
        if (!resource_name_is_valid(name))
                return config_loader_error(l, e, "%s.%s: invalid resource name: lower-case letters, digits and _ "
                                                 "starting with a letter, at most %d bytes",
                                           k->key, name, RESOURCE_NAME_MAX);
        if (config_setting_type(e) != CONFIG_TYPE_INT && config_setting_type(e) != CONFIG_TYPE_INT64)
                return config_loader_error(l, e, "%s.%s: expected an integer, got %s", k->key, name,
                                           config_loader_type_name(e));
        x = config_setting_get_int64(e);
        if (x < k->min || x > k->max)
                return config_loader_error(l, e, "%s.%s: value %lld out of range (%" PRId64 "..%" PRId64 ")",
                                           k->key, name, x, k->min, k->max);
        if (asprintf(ret, "%s=%lld", name, x) < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* A group of at most RESOURCE_KINDS_MAX members, each made a string by
 * load_one.  The key's new value is the NULL-terminated array of them if
 * every member was good; otherwise the old value stays (the errors are
 * recorded). */
static int load_group(Loader *l, const ConfigKey *k, const config_setting_t *s, char ***v,
                      int (*load_one)(Loader *l, const ConfigKey *k, const config_setting_t *e, char **ret)) {
        char **strv;
        size_t n = 0;
        bool bad = false;
        int r = 0;

        if (config_setting_type(s) != CONFIG_TYPE_GROUP)
                return config_loader_error(l, s, "%s: expected a group, got %s", k->key, config_loader_type_name(s));
        if (config_setting_length(s) > RESOURCE_KINDS_MAX)
                return config_loader_error(l, s, "%s: more than %d resources", k->key, RESOURCE_KINDS_MAX);
        strv = calloc((size_t) config_setting_length(s) + 1, sizeof(char *));
        if (!strv)
                return -ENOMEM;
        for (int i = 0; i < config_setting_length(s) && r >= 0; i++) {
                char *e = NULL;

                r = load_one(l, k, config_setting_get_elem(s, (unsigned) i), &e);
                if (e)
                        strv[n++] = e;
                else
                        bad = true;
        }
        if (r < 0 || bad) {
                config_strv_free(strv);
                return r < 0 ? r : 0;
        }
        config_strv_free(*v);
        *v = strv;
        return 0;
}

int config_load_resources(Loader *l, const ConfigKey *k, const config_setting_t *s, char ***v) {
        return load_group(l, k, s, v, load_one_resource);
}

int config_load_amounts(Loader *l, const ConfigKey *k, const config_setting_t *s, char ***v) {
        return load_group(l, k, s, v, load_one_amount);
}

static void format_list(FILE *f, const char *csv) {
        _cleanup_free_ char *copy = strdup(csv);
        char *p = copy, *comma;
        bool first = true;

        fputc('[', f);
        while (p) {
                _cleanup_free_ char *q = NULL;

                comma = strchr(p, ',');
                if (comma)
                        *comma = '\0';
                if (config_quote(p, &q) >= 0)
                        fprintf(f, "%s %s", first ? "" : ",", q);
                first = false;
                p = comma ? comma + 1 : NULL;
        }
        fputs(" ]", f);
}

/* NAME = { addresses = [ ... ]; devices = [ ... ]; } or NAME = { discovery = "..."; }
 * from an entry string of config_load_resources(). */
static int format_resource(FILE *f, const char *entry) {
        _cleanup_free_ char *copy = strdup(entry);
        char *fields[5] = {}, *p = copy;
        size_t n = 0;

        if (!copy)
                return -ENOMEM;
        while (p && n < ELEMENTSOF(fields)) {
                fields[n++] = p;
                p = strchr(p, '\t');
                if (p)
                        *p++ = '\0';
        }
        fprintf(f, " %s = {", fields[0]);
        if (n >= 3 && streq(fields[1], "discovery")) {
                _cleanup_free_ char *q = NULL;

                if (config_quote(fields[2], &q) >= 0)
                        fprintf(f, " discovery = %s;", q);
        } else if (n >= 3) {
                fputs(" addresses = ", f);
                format_list(f, fields[2]);
                fputc(';', f);
                if (n == 5) {
                        fputs(" devices = ", f);
                        format_list(f, fields[4]);
                        fputc(';', f);
                }
        }
        fputs(" };", f);
        return 0;
}

/* NAME = AMOUNT; from "NAME=AMOUNT". */
static int format_amount(FILE *f, const char *entry) {
        const char *eq = strchr(entry, '=');

        if (eq)
                fprintf(f, " %.*s = %s;", (int) (eq - entry), entry, eq + 1);
        return 0;
}

/* { ... } with each entry of l as format_one writes it. */
static int format_group(char *const *l, int (*format_one)(FILE *f, const char *entry), char **ret) {
        _cleanup_(memstream_done) MemStream m = {};
        FILE *f;
        int r;

        f = memstream_init(&m);
        if (!f)
                return -ENOMEM;
        fputc('{', f);
        for (char *const *e = l; e && *e; e++) {
                r = format_one(f, *e);
                if (r < 0)
                        return r;
        }
        fputs(" }", f);
        return memstream_finalize(&m, ret, NULL);
}

int config_format_resources(char *const *l, char **ret) {
        return format_group(l, format_resource, ret);
}

int config_format_amounts(char *const *l, char **ret) {
        return format_group(l, format_amount, ret);
}
