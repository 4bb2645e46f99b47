/* Named resources (GPUs, FPGAs, ...) a worker offers and an executor is
 * given, and the labels a worker carries: their names, the checks every
 * side applies to them (configuration, discovery script, wire), and the
 * worker's list of what it offers.  docs/resources.md says how they are
 * shared; nothing here logs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Bounds, the same in the configuration, a discovery script's output and
 * every message that carries them. */
#define RESOURCE_NAME_MAX 32          /* bytes of a name, without the NUL */
#define RESOURCE_ADDRESS_MAX 64       /* bytes of an address */
#define RESOURCE_DEVICE_MAX 255       /* bytes of a device path */
#define RESOURCE_KINDS_MAX 16         /* named resources of one worker or one app */
#define RESOURCE_ADDRESSES_MAX 64     /* addresses of one resource on one worker */
#define RESOURCE_DEVICES_MAX 8        /* device paths of one address */
#define RESOURCE_AMOUNT_MAX 64        /* addresses of one resource one executor asks for */
#define LABEL_MAX 63                  /* bytes of a label */
#define LABELS_MAX 32                 /* labels of a worker, constraints of an app */
#define RESOURCE_DISCOVERY_OUTPUT_MAX (64u * 1024)

/* A short identifier: [a-z][a-z0-9_]*, at most RESOURCE_NAME_MAX bytes.
 * Lower case only, so that the executor's SPARK_RESOURCE_<NAME> is one
 * name per resource. */
bool resource_name_is_valid(const char *s);
/* [A-Za-z0-9][A-Za-z0-9._:-]*, at most RESOURCE_ADDRESS_MAX bytes: no
 * comma, the separator in SPARK_RESOURCE_<NAME>. */
bool resource_address_is_valid(const char *s);
/* [A-Za-z0-9][A-Za-z0-9._-]*, at most LABEL_MAX bytes. */
bool resource_label_is_valid(const char *s);
/* An absolute path below /dev/ of [A-Za-z0-9/._-] with no "." or ".."
 * element, empty element or trailing slash: a DeviceAllow= value that
 * names one node and nothing else. */
bool resource_device_is_valid(const char *s);

/* "SPARK_RESOURCE_" and the name upper-cased, into buf. */
int resource_env_name(const char *name, char *buf, size_t size);

typedef struct ResourceAddress {
        char *address;
        char **devices;          /* NULL-terminated; NULL: none */
} ResourceAddress;

/* One named resource with its addresses, as a worker offers it. */
typedef struct ResourceSet {
        char *name;
        ResourceAddress *addresses;
        size_t n_addresses;
} ResourceSet;

void resource_set_done(ResourceSet *r);
void resource_sets_free(ResourceSet *r, size_t n);
/* Appends address (with its devices, NULL-terminated or NULL); checks both
 * and refuses a duplicate or too many, with the reason in err. */
int resource_set_add(ResourceSet *r, const char *address, char *const *devices, char *err, size_t size);
/* The device paths of the address, NULL if it has none or is not offered. */
char *const *resource_set_devices(const ResourceSet *r, const char *address);

/* The form worker.resources keeps one resource in (config.h), one string:
 *   "NAME\tdiscovery\tPATH"  or
 *   "NAME\taddresses\tA,B,...[\tdevices\tD,E,...]"
 * (no field may hold a tab or, but the path, a comma).  Fills *ret_name
 * (a pointer into a copy the caller frees with *ret_buf), and either
 * *ret_discovery or the static set in *ret (name and addresses). */
int resource_entry_parse(const char *entry, char **ret_buf, const char **ret_discovery, ResourceSet *ret,
                         char *err, size_t size);

/* Parses what a discovery script printed: Spark's ResourceInformation JSON,
 *   {"name":"gpu","addresses":["0","1"],"devices":{"0":["/dev/nvidia0"]}}
 * ("devices" optional; other members are skipped).  The name must be
 * expected_name; addresses and device paths must be valid and addresses
 * unique; devices may name only listed addresses.  Strict: anything else
 * is an error, described in err; on error *ret is untouched. */
int resource_discovery_parse(const char *json, size_t len, const char *expected_name, ResourceSet *ret,
                             char *err, size_t size);
