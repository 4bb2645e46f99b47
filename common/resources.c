/* See resources.h.  The discovery parser is a small strict JSON reader for
 * the one shape a discovery script prints: a script is run as root by the
 * worker but its output is still input, so every string, count and nesting
 * level is bounded and checked before it is kept. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error-buf.h"
#include "macro.h"
#include "resources.h"

#define JSON_STRING_MAX 4096
#define JSON_DEPTH_MAX 16

static bool chars_in(const char *s, const char *extra) {
        for (; *s; s++)
                if (!isalnum((unsigned char) *s) && !strchr(extra, *s))
                        return false;
        return true;
}

bool resource_name_is_valid(const char *s) {
        if (!s || !(*s >= 'a' && *s <= 'z') || strlen(s) > RESOURCE_NAME_MAX)
                return false;
        for (; *s; s++)
                if (!(*s >= 'a' && *s <= 'z') && !(*s >= '0' && *s <= '9') && *s != '_')
                        return false;
        return true;
}

bool resource_address_is_valid(const char *s) {
        return s && isalnum((unsigned char) *s) && strlen(s) <= RESOURCE_ADDRESS_MAX && chars_in(s, "._:-");
}

bool resource_label_is_valid(const char *s) {
        return s && isalnum((unsigned char) *s) && strlen(s) <= LABEL_MAX && chars_in(s, "._-");
}

bool resource_device_is_valid(const char *s) {
        size_t n;

        if (!s || strncmp(s, "/dev/", 5) != 0 || s[5] == '\0')
                return false;
        n = strlen(s);
        if (n > RESOURCE_DEVICE_MAX || s[n - 1] == '/' || !chars_in(s, "/._-") || strstr(s, "//"))
                return false;
        for (const char *e = strchr(s, '/'); e; e = strchr(e + 1, '/'))
                if (strncmp(e, "/./", 3) == 0 || strncmp(e, "/../", 4) == 0 || streq(e, "/.") ||
                    streq(e, "/.."))
                        return false;
        return true;
}

int resource_env_name(const char *name, char *buf, size_t size) {
        int n;

        if (!resource_name_is_valid(name))
                return -EINVAL;
        n = snprintf(buf, size, "SPARK_RESOURCE_%s", name);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        for (char *p = buf + strlen("SPARK_RESOURCE_"); *p; p++)
                *p = (char) toupper((unsigned char) *p);
        return 0;
}

static char **strv_free(char **l) {
        if (l)
                for (char **i = l; *i; i++)
                        free(*i);
        free(l);
        return NULL;
}

void resource_set_done(ResourceSet *r) {
        if (!r)
                return;
        for (size_t i = 0; i < r->n_addresses; i++) {
                free(r->addresses[i].address);
                strv_free(r->addresses[i].devices);
        }
        free(r->addresses);
        free(r->name);
        *r = (ResourceSet) {};
}

void resource_sets_free(ResourceSet *r, size_t n) {
        for (size_t i = 0; r && i < n; i++)
                resource_set_done(r + i);
        free(r);
}

char *const *resource_set_devices(const ResourceSet *r, const char *address) {
        for (size_t i = 0; r && address && i < r->n_addresses; i++)
                if (streq(r->addresses[i].address, address))
                        return r->addresses[i].devices;
        return NULL;
}

int resource_set_add(ResourceSet *r, const char *address, char *const *devices, char *err, size_t size) {
        ResourceAddress *a, new = {};
        size_t n_devices = 0;

        if (!resource_address_is_valid(address))
                return error_buf_invalid(err, size, "invalid address \"%.64s\"", address ?: "");
        for (size_t i = 0; i < r->n_addresses; i++)
                if (streq(r->addresses[i].address, address))
                        return error_buf_invalid(err, size, "duplicate address \"%s\"", address);
        if (r->n_addresses >= RESOURCE_ADDRESSES_MAX)
                return error_buf_invalid(err, size, "more than %d addresses", RESOURCE_ADDRESSES_MAX);
        for (char *const *d = devices; d && *d; d++, n_devices++) {
                if (!resource_device_is_valid(*d))
                        return error_buf_invalid(err, size, "address \"%s\": invalid device path \"%.255s\"",
                                                 address, *d);
                if (n_devices >= RESOURCE_DEVICES_MAX)
                        return error_buf_invalid(err, size, "address \"%s\": more than %d device paths",
                                                 address, RESOURCE_DEVICES_MAX);
        }

        new.address = strdup(address);
        if (!new.address)
                return -ENOMEM;
        if (n_devices > 0) {
                new.devices = calloc(n_devices + 1, sizeof(char *));
                if (!new.devices) {
                        free(new.address);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < n_devices; i++)
                        if (!(new.devices[i] = strdup(devices[i]))) {
                                free(new.address);
                                strv_free(new.devices);
                                return -ENOMEM;
                        }
        }
        a = realloc(r->addresses, (r->n_addresses + 1) * sizeof(*a));
        if (!a) {
                free(new.address);
                strv_free(new.devices);
                return -ENOMEM;
        }
        r->addresses = a;
        r->addresses[r->n_addresses++] = new;
        return 0;
}

/* ------------------------------------------------- worker.resources entries */

/* Splits a comma-separated field in place into a NULL-terminated vector
 * of pointers into it (at most max elements). */
static int split_commas(char *s, char **v, size_t max) {
        size_t n = 0;

        for (char *p = s;; ) {
                char *comma = strchr(p, ',');

                if (n >= max)
                        return -E2BIG;
                if (comma)
                        *comma = '\0';
                v[n++] = p;
                if (!comma)
                        break;
                p = comma + 1;
        }
        v[n] = NULL;
        return (int) n;
}

int resource_entry_parse(const char *entry, char **ret_buf, const char **ret_discovery, ResourceSet *ret,
                         char *err, size_t size) {
        _cleanup_free_ char *buf = NULL;
        char *fields[6] = {}, *p, *addresses[RESOURCE_ADDRESSES_MAX + 1], *devices[RESOURCE_ADDRESSES_MAX + 1];
        ResourceSet set = {};
        size_t n = 0;
        int n_addresses, n_devices = -1, r;

        buf = strdup(entry ?: "");
        if (!buf)
                return -ENOMEM;
        for (p = buf; n < ELEMENTSOF(fields); n++) {
                fields[n] = p;
                p = strchr(p, '\t');
                if (!p) {
                        n++;
                        break;
                }
                *p++ = '\0';
        }
        if (!resource_name_is_valid(fields[0]))
                return error_buf_invalid(err, size, "invalid resource name");
        if (n == 3 && streq(fields[1], "discovery")) {
                *ret_discovery = fields[2];
                *ret_buf = TAKE_PTR(buf);
                return 0;
        }
        if ((n != 3 && n != 5) || !streq(fields[1], "addresses") || (n == 5 && !streq(fields[3], "devices")))
                return error_buf_invalid(err, size, "%s: malformed entry", fields[0]);
        n_addresses = split_commas(fields[2], addresses, RESOURCE_ADDRESSES_MAX);
        if (n == 5)
                n_devices = split_commas(fields[4], devices, RESOURCE_ADDRESSES_MAX);
        if (n_addresses < 0 || (n == 5 && n_devices != n_addresses))
                return error_buf_invalid(err, size, "%s: malformed entry", fields[0]);

        set.name = strdup(fields[0]);
        if (!set.name)
                return -ENOMEM;
        for (int i = 0; i < n_addresses; i++) {
                char *one[2] = { n == 5 ? devices[i] : NULL, NULL };

                r = resource_set_add(&set, addresses[i], one, err, size);
                if (r < 0) {
                        resource_set_done(&set);
                        return r;
                }
        }
        *ret_discovery = NULL;
        *ret = set;
        *ret_buf = TAKE_PTR(buf);
        return 0;
}

/* ------------------------------------------------------- discovery JSON */

typedef struct JsonReader {
        const char *p, *end;
        char *err;
        size_t size;
} JsonReader;

static void json_skip_space(JsonReader *j) {
        while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
                j->p++;
}

static int json_expect(JsonReader *j, char c) {
        json_skip_space(j);
        if (j->p >= j->end || *j->p != c)
                return error_buf_invalid(j->err, j->size, "bad JSON: expected '%c'", c);
        j->p++;
        return 0;
}

static bool json_peek(JsonReader *j, char c) {
        json_skip_space(j);
        return j->p < j->end && *j->p == c;
}

static int hex_digit(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* A string into buf (NUL-terminated); non-ASCII and NUL are refused, since
 * nothing this JSON may hold is either. */
static int json_string(JsonReader *j, char *buf, size_t size) {
        size_t n = 0;

        if (json_expect(j, '"') < 0)
                return error_buf_invalid(j->err, j->size, "bad JSON: expected a string");
        for (;;) {
                char c;

                if (j->p >= j->end)
                        return error_buf_invalid(j->err, j->size, "bad JSON: unterminated string");
                c = *j->p++;
                if (c == '"')
                        break;
                if ((unsigned char) c < 0x20 || (unsigned char) c >= 0x7f)
                        return error_buf_invalid(j->err, j->size, "bad JSON: a control or non-ASCII character in a string");
                if (c == '\\') {
                        if (j->p >= j->end)
                                return error_buf_invalid(j->err, j->size, "bad JSON: unterminated string");
                        c = *j->p++;
                        switch (c) {
                        case '"': case '\\': case '/':
                                break;
                        case 'u': {
                                int v = 0;
                                for (int k = 0; k < 4; k++) {
                                        int d = j->p < j->end ? hex_digit(*j->p++) : -1;
                                        if (d < 0)
                                                return error_buf_invalid(j->err, j->size, "bad JSON: bad \\u escape");
                                        v = v * 16 + d;
                                }
                                if (v < 0x20 || v >= 0x7f)
                                        return error_buf_invalid(j->err, j->size,
                                                                 "bad JSON: a control or non-ASCII character in a string");
                                c = (char) v;
                                break;
                        }
                        default:
                                return error_buf_invalid(j->err, j->size, "bad JSON: a control character escape in a string");
                        }
                }
                if (n + 1 >= size)
                        return error_buf_invalid(j->err, j->size, "a string longer than %zu bytes", size - 1);
                buf[n++] = c;
        }
        buf[n] = '\0';
        return 0;
}

/* Skips any JSON value, nested at most JSON_DEPTH_MAX deep. */
static int json_skip_value(JsonReader *j, unsigned depth) {
        char scratch[JSON_STRING_MAX];
        int r;

        if (depth > JSON_DEPTH_MAX)
                return error_buf_invalid(j->err, j->size, "bad JSON: nested too deep");
        json_skip_space(j);
        if (j->p >= j->end)
                return error_buf_invalid(j->err, j->size, "bad JSON: unexpected end");
        if (*j->p == '"')
                return json_string(j, scratch, sizeof(scratch));
        if (*j->p == '[' || *j->p == '{') {
                bool object = *j->p == '{';
                char close = object ? '}' : ']';

                j->p++;
                if (json_peek(j, close)) {
                        j->p++;
                        return 0;
                }
                for (;;) {
                        if (object) {
                                r = json_string(j, scratch, sizeof(scratch));
                                if (r >= 0)
                                        r = json_expect(j, ':');
                                if (r < 0)
                                        return r;
                        }
                        r = json_skip_value(j, depth + 1);
                        if (r < 0)
                                return r;
                        if (json_peek(j, ',')) {
                                j->p++;
                                continue;
                        }
                        return json_expect(j, close);
                }
        }
        /* a number, true, false or null */
        if (!strchr("-0123456789tfn", *j->p))
                return error_buf_invalid(j->err, j->size, "bad JSON: unexpected '%c'", *j->p);
        while (j->p < j->end && (isalnum((unsigned char) *j->p) || strchr("+-.", *j->p)))
                j->p++;
        return 0;
}

/* ["a","b",...] of at most max strings, each checked by valid(). */
static int json_string_array(JsonReader *j, char ***ret, size_t max, bool (*valid)(const char *), const char *what) {
        char **v;
        size_t n = 0;
        int r = 0;

        v = calloc(max + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        if (json_expect(j, '[') < 0) {
                strv_free(v);
                return error_buf_invalid(j->err, j->size, "%s: expected an array of strings", what);
        }
        if (json_peek(j, ']'))
                j->p++;
        else
                for (;;) {
                        char s[JSON_STRING_MAX];

                        r = json_string(j, s, sizeof(s));
                        if (r < 0)
                                break;
                        if (n >= max) {
                                r = error_buf_invalid(j->err, j->size, "%s: more than %zu entries", what, max);
                                break;
                        }
                        if (!valid(s)) {
                                r = error_buf_invalid(j->err, j->size, "%s: invalid entry \"%.64s\"", what, s);
                                break;
                        }
                        v[n] = strdup(s);
                        if (!v[n++]) {
                                r = -ENOMEM;
                                break;
                        }
                        if (json_peek(j, ',')) {
                                j->p++;
                                continue;
                        }
                        r = json_expect(j, ']');
                        break;
                }
        if (r < 0) {
                strv_free(v);
                return r;
        }
        *ret = v;
        return 0;
}

typedef struct DeviceEntry {
        char *address;
        char **devices;
} DeviceEntry;

static void device_entries_free(DeviceEntry *d, size_t n) {
        for (size_t i = 0; d && i < n; i++) {
                free(d[i].address);
                strv_free(d[i].devices);
        }
        free(d);
}

static int json_devices(JsonReader *j, DeviceEntry **ret, size_t *ret_n) {
        DeviceEntry *d;
        size_t n = 0;
        int r = 0;

        d = calloc(RESOURCE_ADDRESSES_MAX, sizeof(*d));
        if (!d)
                return -ENOMEM;
        if (json_expect(j, '{') < 0) {
                free(d);
                return error_buf_invalid(j->err, j->size, "devices: expected an object");
        }
        if (json_peek(j, '}'))
                j->p++;
        else
                for (;;) {
                        char address[JSON_STRING_MAX];

                        r = json_string(j, address, sizeof(address));
                        if (r >= 0)
                                r = json_expect(j, ':');
                        if (r < 0)
                                break;
                        if (n >= RESOURCE_ADDRESSES_MAX) {
                                r = error_buf_invalid(j->err, j->size, "devices: more than %d addresses",
                                                      RESOURCE_ADDRESSES_MAX);
                                break;
                        }
                        for (size_t i = 0; i < n && r >= 0; i++)
                                if (streq(d[i].address, address))
                                        r = error_buf_invalid(j->err, j->size, "devices: \"%.64s\" twice", address);
                        if (r < 0)
                                break;
                        d[n].address = strdup(address);
                        if (!d[n].address) {
                                r = -ENOMEM;
                                break;
                        }
                        r = json_string_array(j, &d[n].devices, RESOURCE_DEVICES_MAX, resource_device_is_valid,
                                              "devices");
                        n++;
                        if (r < 0)
                                break;
                        if (json_peek(j, ',')) {
                                j->p++;
                                continue;
                        }
                        r = json_expect(j, '}');
                        break;
                }
        if (r < 0) {
                device_entries_free(d, n);
                return r;
        }
        *ret = d;
        *ret_n = n;
        return 0;
}

int resource_discovery_parse(const char *json, size_t len, const char *expected_name, ResourceSet *ret,
                             char *err, size_t size) {
        JsonReader j = { .p = json, .end = json + len, .err = err, .size = size };
        _cleanup_free_ char *name = NULL;
        char **addresses = NULL;
        DeviceEntry *devices = NULL;
        size_t n_devices = 0;
        ResourceSet set = {};
        bool seen_name = false;
        int r = 0;

        if (!json || !ret)
                return -EINVAL;
        if (len > RESOURCE_DISCOVERY_OUTPUT_MAX)
                return error_buf_invalid(err, size, "output longer than %u bytes", RESOURCE_DISCOVERY_OUTPUT_MAX);
        if (memchr(json, '\0', len))
                return error_buf_invalid(err, size, "bad JSON: a NUL byte");

        r = json_expect(&j, '{');
        if (r < 0)
                return error_buf_invalid(err, size, "bad JSON: expected an object");
        while (r >= 0 && !json_peek(&j, '}')) {
                char key[JSON_STRING_MAX];

                r = json_string(&j, key, sizeof(key));
                if (r >= 0)
                        r = json_expect(&j, ':');
                if (r < 0)
                        break;
                if (streq(key, "name")) {
                        char s[JSON_STRING_MAX];

                        if (seen_name) {
                                r = error_buf_invalid(err, size, "\"name\" twice");
                                break;
                        }
                        seen_name = true;
                        r = json_string(&j, s, sizeof(s));
                        if (r >= 0 && !(name = strdup(s)))
                                r = -ENOMEM;
                } else if (streq(key, "addresses")) {
                        if (addresses) {
                                r = error_buf_invalid(err, size, "\"addresses\" twice");
                                break;
                        }
                        r = json_string_array(&j, &addresses, RESOURCE_ADDRESSES_MAX, resource_address_is_valid,
                                              "addresses");
                } else if (streq(key, "devices")) {
                        if (devices) {
                                r = error_buf_invalid(err, size, "\"devices\" twice");
                                break;
                        }
                        r = json_devices(&j, &devices, &n_devices);
                } else
                        r = json_skip_value(&j, 1);
                if (r < 0)
                        break;
                if (json_peek(&j, ','))
                        j.p++;
                else if (!json_peek(&j, '}'))
                        r = error_buf_invalid(err, size, "bad JSON: expected ',' or '}'");
        }
        if (r >= 0) {
                j.p++; /* the '}' */
                json_skip_space(&j);
                if (j.p != j.end)
                        r = error_buf_invalid(err, size, "bad JSON: trailing data after the object");
        }
        if (r >= 0 && !name)
                r = error_buf_invalid(err, size, "no \"name\"");
        if (r >= 0 && !resource_name_is_valid(name))
                r = error_buf_invalid(err, size, "invalid name \"%.64s\"", name);
        if (r >= 0 && expected_name && !streq(name, expected_name))
                r = error_buf_invalid(err, size, "name \"%s\" is not the configured \"%s\"", name, expected_name);
        if (r >= 0 && !addresses)
                r = error_buf_invalid(err, size, "no \"addresses\"");

        if (r >= 0)
                for (size_t i = 0; i < n_devices && r >= 0; i++) {
                        bool listed = false;
                        for (char **a = addresses; *a && !listed; a++)
                                listed = streq(*a, devices[i].address);
                        if (!listed)
                                r = error_buf_invalid(err, size, "devices: \"%.64s\" is not in addresses",
                                                      devices[i].address);
                }
        if (r >= 0) {
                set.name = strdup(name);
                if (!set.name)
                        r = -ENOMEM;
        }
        for (char **a = addresses; r >= 0 && *a; a++) {
                char **devs = NULL;
                for (size_t i = 0; i < n_devices; i++)
                        if (streq(devices[i].address, *a))
                                devs = devices[i].devices;
                r = resource_set_add(&set, *a, devs, err, size);
        }

        strv_free(addresses);
        device_entries_free(devices, n_devices);
        if (r < 0) {
                resource_set_done(&set);
                return r;
        }
        *ret = set;
        return 0;
}
