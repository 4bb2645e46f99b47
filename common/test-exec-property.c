/* Executor unit properties as "Name=value": the names, the reserved ones,
 * and the value of each type (exec-property.c). */
#include <check.h>
#include <stdio.h>

#include "check-run.h"
#include "exec-property.h"
#include "macro.h"

static void assert_bad(const char *a, const char *needle) {
        ExecProperty p = {};
        char error[256] = "";

        ck_assert_int_eq(exec_property_parse(a, &p, error, sizeof(error)), -EINVAL);
        ck_assert_msg(strstr(error, needle), "%s: error \"%s\" does not mention \"%s\"", a, error, needle);
        ck_assert_ptr_null(p.info);
}

START_TEST(test_good) {
        ExecProperty p = {};

        ck_assert_int_eq(exec_property_parse("NoNewPrivileges=yes", &p, NULL, 0), 0);
        ck_assert_str_eq(p.info->name, "NoNewPrivileges");
        ck_assert(p.b);
        exec_property_done(&p);
        ck_assert_int_eq(exec_property_parse("PrivateTmp=off", &p, NULL, 0), 0);
        ck_assert(!p.b);
        exec_property_done(&p);
        ck_assert_int_eq(exec_property_parse("ProtectSystem=strict", &p, NULL, 0), 0);
        ck_assert_str_eq(p.s, "strict");
        exec_property_done(&p);
        ck_assert_int_eq(exec_property_parse("UMask=0077", &p, NULL, 0), 0);
        ck_assert_uint_eq(p.u, 077);
        exec_property_done(&p);
        ck_assert_int_eq(exec_property_parse("TasksMax=infinity", &p, NULL, 0), 0);
        ck_assert_uint_eq(p.t, UINT64_MAX);
        exec_property_done(&p);
        ck_assert_int_eq(exec_property_parse("CapabilityBoundingSet=", &p, NULL, 0), 0);
        ck_assert_uint_eq(p.t, 0);
        exec_property_done(&p);
        ck_assert_int_eq(exec_property_parse("CapabilityBoundingSet=CAP_NET_BIND_SERVICE cap_chown", &p, NULL, 0), 0);
        ck_assert_uint_eq(p.t, (1u << 10) | 1u);
        exec_property_done(&p);
        ck_assert_int_eq(exec_property_parse("RestrictNamespaces=yes", &p, NULL, 0), 0);
        ck_assert_uint_eq(p.t, 0);
        exec_property_done(&p);
        ck_assert_int_eq(exec_property_parse("RestrictAddressFamilies=~ AF_PACKET", &p, NULL, 0), 0);
        ck_assert(!p.b);
        ck_assert_uint_eq(p.n, 1);
        ck_assert_str_eq(p.strv[0], "AF_PACKET");
        exec_property_done(&p);
        ck_assert_int_eq(exec_property_parse("SystemCallFilter=~@mount @swap", &p, NULL, 0), 0);
        ck_assert(!p.b);
        ck_assert_uint_eq(p.n, 2);
        ck_assert_str_eq(p.strv[0], "@mount");
        exec_property_done(&p);
        ck_assert_int_eq(exec_property_parse("InaccessiblePaths=-/etc/spark/tls /var/lib/spark/master", &p, NULL, 0), 0);
        ck_assert_uint_eq(p.n, 2);
        ck_assert_str_eq(p.strv[0], "-/etc/spark/tls");
        exec_property_done(&p);
        ck_assert_int_eq(exec_property_parse("InaccessiblePaths=", &p, NULL, 0), 0);
        ck_assert_uint_eq(p.n, 0);
        exec_property_done(&p);
        ck_assert_int_eq(exec_property_parse("BindPaths=-/a:/b:norbind /c", &p, NULL, 0), 0);
        ck_assert_uint_eq(p.n, 2);
        ck_assert_str_eq(p.strv[0], "/a");
        ck_assert_str_eq(p.dest[0], "/b");
        ck_assert(p.ignore[0] && !p.recursive[0]);
        ck_assert_str_eq(p.dest[1], "/c");
        ck_assert(!p.ignore[1] && p.recursive[1]);
        exec_property_done(&p);
        ck_assert_int_eq(exec_property_parse("DeviceAllow=/dev/nvidia0 rw", &p, NULL, 0), 0);
        ck_assert_str_eq(p.s, "/dev/nvidia0");
        ck_assert_str_eq(p.perm, "rw");
        exec_property_done(&p);
        ck_assert_int_eq(exec_property_parse("DeviceAllow=char-nvidia-uvm", &p, NULL, 0), 0);
        ck_assert_str_eq(p.perm, "rwm");
        exec_property_done(&p);
        exec_property_done(&p);
        exec_property_done(NULL);
}
END_TEST

START_TEST(test_bad) {
        assert_bad("ExecStart=/bin/sh -c evil", "ExecStart: the worker sets it");
        assert_bad("User=root", "User: the worker sets it");
        assert_bad("DynamicUser=no", "DynamicUser: the worker sets it");
        assert_bad("Slice=system.slice", "the worker sets it");
        assert_bad("LoadCredential=x:/etc/shadow", "the worker sets it");
        assert_bad("SetCredential=x:y", "the worker sets it");
        assert_bad("Environment=A=b", "the worker sets it");
        assert_bad("WorkingDirectory=/", "the worker sets it");
        assert_bad("StateDirectory=x", "the worker sets it");
        assert_bad("MemoryMax=infinity", "the worker sets it");
        assert_bad("Frobnicate=yes", "Frobnicate: not a property");
        assert_bad("noprivs", "not Name=value");
        assert_bad("=yes", "not Name=value");
        assert_bad("NoNewPrivileges=maybe", "not a boolean");
        assert_bad("ProtectSystem=very", "not one of its values");
        assert_bad("UMask=0999", "octal");
        assert_bad("UMask=01000", "octal");
        assert_bad("TasksMax=0", "not a number");
        assert_bad("TasksMax=-1", "not a number");
        assert_bad("TasksMax=12abc", "not a number");
        assert_bad("CapabilityBoundingSet=CAP_NOPE", "unknown capability");
        assert_bad("RestrictNamespaces=net", "only yes or no");
        assert_bad("SystemCallFilter=", "no names");
        assert_bad("SystemCallFilter=read;write", "quotes");
        assert_bad("ReadWritePaths=relative", "absolute");
        assert_bad("ReadWritePaths=/a/../etc", "absolute, normalized");
        assert_bad("ReadWritePaths=/a/$HOME", "quotes, '$'");
        assert_bad("ReadWritePaths=/a/%h", "'%'");
        assert_bad("BindPaths=/a:relative", "SOURCE[:DEST");
        assert_bad("BindPaths=/a:/b:bogus", "unknown option");
        assert_bad("DeviceAllow=/dev/sda rwx", "PATH [rwm]");
        assert_bad("SystemCallArchitectures=", "empty");
        assert_bad("SystemCallArchitectures=vax", "not one of its values");
}
END_TEST

/* Every name has a type, none is both known and reserved. */
START_TEST(test_table) {
        const ExecPropertyInfo *t;
        size_t n;

        t = exec_property_table(&n);
        ck_assert_uint_ge(n, 30);
        for (size_t i = 0; i < n; i++) {
                ck_assert_ptr_eq(exec_property_info(t[i].name), t + i);
                ck_assert_msg(!exec_property_name_is_reserved(t[i].name, strlen(t[i].name)), "%s", t[i].name);
                ck_assert(t[i].type >= 0 && t[i].type < _EXEC_PROPERTY_TYPE_MAX);
        }
        ck_assert(exec_property_name_is_reserved("User=x", 4));
        ck_assert(!exec_property_name_is_reserved("Use", 3));
        ck_assert_ptr_null(exec_property_info("user"));
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_good,
                test_bad,
                test_table,
                NULL,
        };

        return check_run_tests("exec-property", NULL, tests);
}
