/* Resource names, addresses, labels and device paths, worker.resources
 * entries and a discovery script's JSON (resources.c). */
#include <check.h>
#include <string.h>

#include "check-run.h"
#include "macro.h"
#include "resources.h"

START_TEST(test_names) {
        ck_assert(resource_name_is_valid("gpu"));
        ck_assert(resource_name_is_valid("fpga_2"));
        ck_assert(!resource_name_is_valid(""));
        ck_assert(!resource_name_is_valid(NULL));
        ck_assert(!resource_name_is_valid("GPU"));
        ck_assert(!resource_name_is_valid("2gpu"));
        ck_assert(!resource_name_is_valid("g-pu"));
        ck_assert(!resource_name_is_valid("gpu=1"));
        ck_assert(!resource_name_is_valid("gpu\n"));
        ck_assert(!resource_name_is_valid("abcdefghijklmnopqrstuvwxyzabcdefg")); /* 33 */
        ck_assert(resource_name_is_valid("abcdefghijklmnopqrstuvwxyzabcdef"));   /* 32 */

        ck_assert(resource_address_is_valid("0"));
        ck_assert(resource_address_is_valid("0000:01:00.0"));
        ck_assert(!resource_address_is_valid(""));
        ck_assert(!resource_address_is_valid("0,1"));
        ck_assert(!resource_address_is_valid("-1"));
        ck_assert(!resource_address_is_valid("a b"));
        ck_assert(!resource_address_is_valid("$(reboot)"));

        ck_assert(resource_label_is_valid("ssd"));
        ck_assert(resource_label_is_valid("zone-a.rack_1"));
        ck_assert(!resource_label_is_valid(""));
        ck_assert(!resource_label_is_valid(".hidden"));
        ck_assert(!resource_label_is_valid("a:b"));
        ck_assert(!resource_label_is_valid("a b"));
}
END_TEST

START_TEST(test_devices) {
        ck_assert(resource_device_is_valid("/dev/nvidia0"));
        ck_assert(resource_device_is_valid("/dev/dri/renderD128"));
        ck_assert(!resource_device_is_valid("/dev/"));
        ck_assert(!resource_device_is_valid("/dev"));
        ck_assert(!resource_device_is_valid("/etc/shadow"));
        ck_assert(!resource_device_is_valid("/dev/../etc/shadow"));
        ck_assert(!resource_device_is_valid("/dev/./null"));
        ck_assert(!resource_device_is_valid("/dev/.."));
        ck_assert(!resource_device_is_valid("/dev//null"));
        ck_assert(!resource_device_is_valid("/dev/null/"));
        ck_assert(!resource_device_is_valid("/dev/null rwm"));
        ck_assert(!resource_device_is_valid("/dev/a\nb"));
        ck_assert(!resource_device_is_valid("dev/null"));
        ck_assert(!resource_device_is_valid("char-*"));
}
END_TEST

START_TEST(test_env_name) {
        char buf[64];

        ck_assert_int_eq(resource_env_name("gpu", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "SPARK_RESOURCE_GPU");
        ck_assert_int_eq(resource_env_name("fpga_2", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "SPARK_RESOURCE_FPGA_2");
        ck_assert_int_eq(resource_env_name("GPU", buf, sizeof(buf)), -EINVAL);
        ck_assert_int_eq(resource_env_name("gpu", buf, 10), -ENOBUFS);
}
END_TEST

START_TEST(test_entry) {
        ResourceSet set = {};
        const char *discovery = NULL;
        char err[256] = "", *buf = NULL;

        ck_assert_int_eq(resource_entry_parse("gpu\taddresses\t0,1\tdevices\t/dev/nvidia0,/dev/nvidia1", &buf,
                                              &discovery, &set, err, sizeof(err)), 0);
        ck_assert_ptr_null(discovery);
        ck_assert_str_eq(set.name, "gpu");
        ck_assert_uint_eq(set.n_addresses, 2);
        ck_assert_str_eq(set.addresses[1].address, "1");
        ck_assert_str_eq(resource_set_devices(&set, "1")[0], "/dev/nvidia1");
        ck_assert_ptr_null(resource_set_devices(&set, "1")[1]);
        ck_assert_ptr_null(resource_set_devices(&set, "2"));
        resource_set_done(&set);
        free(buf);

        ck_assert_int_eq(resource_entry_parse("fpga\taddresses\ta", &buf, &discovery, &set, err, sizeof(err)), 0);
        ck_assert_ptr_null(set.addresses[0].devices);
        resource_set_done(&set);
        free(buf);

        ck_assert_int_eq(resource_entry_parse("gpu\tdiscovery\t/usr/lib/spark/find gpus", &buf, &discovery, &set,
                                              err, sizeof(err)), 0);
        ck_assert_str_eq(discovery, "/usr/lib/spark/find gpus");
        free(buf);

        ck_assert_int_eq(resource_entry_parse("gpu\taddresses\t0,0", &buf, &discovery, &set, err, sizeof(err)),
                         -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "duplicate address \"0\""));
        ck_assert_int_eq(resource_entry_parse("gpu\taddresses\t0,1\tdevices\t/dev/a", &buf, &discovery, &set, err,
                                              sizeof(err)), -EINVAL);
        ck_assert_int_eq(resource_entry_parse("GPU\tdiscovery\t/x", &buf, &discovery, &set, err, sizeof(err)),
                         -EINVAL);
}
END_TEST

static int parse(const char *json, const char *name, ResourceSet *set, char *err, size_t size) {
        return resource_discovery_parse(json, strlen(json), name, set, err, size);
}

START_TEST(test_discovery_good) {
        ResourceSet set = {};
        char err[256] = "";

        ck_assert_int_eq(parse("{\"name\":\"gpu\",\"addresses\":[\"0\",\"1\"]}", "gpu", &set, err, sizeof(err)), 0);
        ck_assert_str_eq(set.name, "gpu");
        ck_assert_uint_eq(set.n_addresses, 2);
        ck_assert_str_eq(set.addresses[0].address, "0");
        ck_assert_ptr_null(set.addresses[0].devices);
        resource_set_done(&set);

        ck_assert_int_eq(parse(" {\n \"name\" : \"gpu\", \"vendor\": {\"x\": [1, 2.5e3, true, null, \"\\u0041\"]},\n"
                               "  \"addresses\": [\"0\", \"1\"],\n"
                               "  \"devices\": {\"1\": [\"/dev/nvidia1\", \"/dev/nvidiactl\"], \"0\": []}}\n",
                               "gpu", &set, err, sizeof(err)), 0);
        ck_assert_uint_eq(set.n_addresses, 2);
        ck_assert_ptr_null(resource_set_devices(&set, "0") ? resource_set_devices(&set, "0")[0] : NULL);
        ck_assert_str_eq(resource_set_devices(&set, "1")[0], "/dev/nvidia1");
        ck_assert_str_eq(resource_set_devices(&set, "1")[1], "/dev/nvidiactl");
        resource_set_done(&set);

        /* no addresses: a machine without the device offers none */
        ck_assert_int_eq(parse("{\"name\":\"gpu\",\"addresses\":[]}", "gpu", &set, err, sizeof(err)), 0);
        ck_assert_uint_eq(set.n_addresses, 0);
        resource_set_done(&set);
}
END_TEST

START_TEST(test_discovery_bad) {
        static const struct {
                const char *json, *why;
        } bad[] = {
                { "", "bad JSON" },
                { "not json", "bad JSON" },
                { "{\"name\":\"gpu\",\"addresses\":[\"0\",\"1\"]", "bad JSON" },
                { "{\"name\":\"gpu\",\"addresses\":[\"0\",\"1\"]} {}", "trailing data" },
                { "{\"name\":\"gpu\",\"addresses\":[\"0\",\"1\",]}", "bad JSON" },
                { "{\"name\":\"fpga\",\"addresses\":[\"0\"]}", "not the configured" },
                { "{\"name\":\"../gpu\",\"addresses\":[\"0\"]}", "invalid name" },
                { "{\"name\":\"GPU\",\"addresses\":[\"0\"]}", "invalid name" },
                { "{\"addresses\":[\"0\"]}", "no \"name\"" },
                { "{\"name\":\"gpu\"}", "no \"addresses\"" },
                { "{\"name\":\"gpu\",\"name\":\"gpu\",\"addresses\":[\"0\"]}", "twice" },
                { "{\"name\":\"gpu\",\"addresses\":[\"0\",\"0\"]}", "duplicate address" },
                { "{\"name\":\"gpu\",\"addresses\":[\"0,1\"]}", "invalid entry" },
                { "{\"name\":\"gpu\",\"addresses\":[0]}", "expected a string" },
                { "{\"name\":\"gpu\",\"addresses\":\"0\"}", "expected an array" },
                { "{\"name\":\"gpu\",\"addresses\":[\"0\"],\"devices\":{\"0\":[\"/etc/shadow\"]}}", "invalid entry" },
                { "{\"name\":\"gpu\",\"addresses\":[\"0\"],\"devices\":{\"0\":[\"/dev/../etc\"]}}", "invalid entry" },
                { "{\"name\":\"gpu\",\"addresses\":[\"0\"],\"devices\":{\"1\":[\"/dev/nvidia1\"]}}", "not in addresses" },
                { "{\"name\":\"gpu\",\"addresses\":[\"0\"],\"devices\":{\"0\":[],\"0\":[]}}", "twice" },
                { "{\"name\":\"gp\\u00e9\",\"addresses\":[\"0\"]}", "non-ASCII" },
                { "{\"name\":\"gpu\\n\",\"addresses\":[\"0\"]}", "control" },
                { "{\"name\":\"gpu\",\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]],\"addresses\":[]}",
                  "too deep" },
        };
        ResourceSet set = { .name = (char *) "untouched" };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char err[256] = "";

                ck_assert_msg(parse(bad[i].json, "gpu", &set, err, sizeof(err)) == -EINVAL, "accepted %s",
                              bad[i].json);
                ck_assert_msg(strstr(err, bad[i].why), "%s: \"%s\" does not say \"%s\"", bad[i].json, err,
                              bad[i].why);
                ck_assert_str_eq(set.name, "untouched");
        }
}
END_TEST

START_TEST(test_discovery_bounds) {
        char err[256] = "", *json;
        ResourceSet set = {};
        size_t size = 16 + 8 * (RESOURCE_ADDRESSES_MAX + 1) + 64, n;

        /* one address too many */
        json = malloc(size);
        ck_assert_ptr_nonnull(json);
        n = (size_t) snprintf(json, size, "{\"name\":\"gpu\",\"addresses\":[");
        for (int i = 0; i <= RESOURCE_ADDRESSES_MAX; i++)
                n += (size_t) snprintf(json + n, size - n, "%s\"%d\"", i ? "," : "", i);
        snprintf(json + n, size - n, "]}");
        ck_assert_int_eq(parse(json, "gpu", &set, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "more than"));
        free(json);

        /* output beyond the limit, before anything is parsed */
        json = malloc(RESOURCE_DISCOVERY_OUTPUT_MAX + 2);
        ck_assert_ptr_nonnull(json);
        memset(json, ' ', RESOURCE_DISCOVERY_OUTPUT_MAX + 1);
        json[RESOURCE_DISCOVERY_OUTPUT_MAX + 1] = '\0';
        ck_assert_int_eq(parse(json, "gpu", &set, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "longer than"));
        free(json);

        /* a NUL inside */
        ck_assert_int_eq(resource_discovery_parse("{\"name\":\"gpu\"\0}", 15, "gpu", &set, err, sizeof(err)), -EINVAL);
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_names,
                test_devices,
                test_env_name,
                test_entry,
                test_discovery_good,
                test_discovery_bad,
                test_discovery_bounds,
                NULL,
        };

        return check_run_tests("resources", NULL, tests);
}
