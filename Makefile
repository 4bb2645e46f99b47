# spark-deploy build.  Each source directory below is one "module": every
# .c file in it except main.c, test-*.c and fuzz-*.c goes into the module's
# archive; main.c (if any) becomes the program; each test-*.c becomes a
# libcheck test binary linked against the module and the common layer.
# New files are picked up by wildcard, so adding a module file needs no edit here.

PREFIX     ?= /usr
SBINDIR    ?= $(PREFIX)/sbin
BINDIR     ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/lib/spark
UNITDIR    ?= $(PREFIX)/lib/systemd/system
MANDIR     ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
VERSION    := 0.1.0

CC      ?= cc
PKGS    := libsystemd libconfig libprotobuf-c
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ifeq ($(SANITIZE),1)
B       := build-san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
B       := build
SANFLAGS :=
endif
CPPFLAGS += -D_GNU_SOURCE -DSPARK_VERSION='"$(VERSION)"' -I$(B)/gen -Icommon -Idaemons/shared -Iinclude \
            $(shell pkg-config --cflags $(PKGS))
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(SANFLAGS) -MMD -MP
LDLIBS  := $(shell pkg-config --libs $(PKGS)) -lnng -lpthread -ldl -lm
CHECK_LIBS := $(shell pkg-config --libs check)

MODULES  := common daemons/shared daemons/master daemons/worker daemons/driver daemons/executor tools/sparkctl
PROGRAMS := spark-master spark-worker spark-driver spark-executor sparkctl
prog_dir  = $(if $(filter sparkctl,$(1)),tools/sparkctl,daemons/$(patsubst spark-%,%,$(1)))

PROTO_C  := $(B)/gen/spark.pb-c.c
PROTO_H  := $(B)/gen/spark.pb-c.h

lib_srcs  = $(filter-out $(1)/main.c $(1)/test-%.c $(1)/fuzz-%.c,$(wildcard $(1)/*.c))
objs      = $(patsubst %.c,$(B)/obj/%.o,$(1))
COMMON_A := $(B)/lib/daemons-shared.a $(B)/lib/common.a

.PHONY: all check check-unit check-integration clean install demo bench
all: $(addprefix $(B)/,$(PROGRAMS)) unit-tests test-helpers examples

$(PROTO_C) $(PROTO_H) &: proto/spark.proto
	@mkdir -p $(B)/gen
	protoc-c --proto_path=proto --c_out=$(B)/gen $<

$(B)/obj/gen/spark.pb-c.o: $(PROTO_C)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -std=gnu11 $(CFLAGS) $(SANFLAGS) -c -o $@ $<

$(B)/obj/%.o: %.c | $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# One archive per module.
define module_rules
$(B)/lib/$(subst /,-,$(1)).a: $(call objs,$(call lib_srcs,$(1))) $(if $(filter common,$(1)),$(B)/obj/gen/spark.pb-c.o)
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
UNIT_TESTS += $(patsubst $(1)/test-%.c,$(B)/tests/test-%,$(wildcard $(1)/test-*.c))
$(patsubst $(1)/test-%.c,$(B)/tests/test-%,$(wildcard $(1)/test-*.c)): $(B)/tests/test-%: $(B)/obj/$(1)/test-%.o $(B)/lib/$(subst /,-,$(1)).a $(COMMON_A)
	@mkdir -p $$(dir $$@)
	$$(CC) $(ALL_CFLAGS) -o $$@ $$^ $$(CHECK_LIBS) $$(LDLIBS)
endef
$(foreach m,$(MODULES),$(eval $(call module_rules,$(m))))

define program_rule
$(B)/$(1): $(B)/obj/$(call prog_dir,$(1))/main.o $(B)/lib/$(subst /,-,$(call prog_dir,$(1))).a $(COMMON_A)
	$$(CC) $(ALL_CFLAGS) -o $$@ $$^ $$(LDLIBS)
endef
$(foreach p,$(PROGRAMS),$(eval $(call program_rule,$(p))))

# Helper programs used only by tests (e.g. a fake executor binary).
TEST_HELPERS := $(patsubst tests/helpers/%.c,$(B)/tests/helpers/%,$(wildcard tests/helpers/*.c))
$(B)/tests/helpers/%: $(B)/obj/tests/helpers/%.o $(COMMON_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

# Shared objects of function tasks: the examples, and the test tasks.  Built
# without sanitizers: they are loaded into whichever executor runs them.
EXAMPLE_LIBS := $(patsubst examples/%.c,$(B)/examples/%.so,$(wildcard examples/*.c))
TASK_LIBS := $(patsubst tests/helpers/tasks/%.c,$(B)/tests/helpers/tasks/%.so,$(wildcard tests/helpers/tasks/*.c))
$(B)/examples/%.so: examples/%.c include/spark/task.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -shared -fPIC -Iinclude -o $@ $<
$(B)/tests/helpers/tasks/%.so: tests/helpers/tasks/%.c include/spark/task.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) -Wno-missing-prototypes $(CFLAGS) -shared -fPIC -Iinclude -o $@ $<

.PHONY: unit-tests test-helpers examples
unit-tests: $(UNIT_TESTS)
test-helpers: $(TEST_HELPERS) $(TASK_LIBS)
examples: $(EXAMPLE_LIBS)

# `make check`: unit tests, then black-box tests against a private systemd
# user manager started by tests/harness.
check: all
	SPARK_BUILD=$(abspath $(B)) tests/run-unit.sh $(UNIT_TESTS)
	SPARK_BUILD=$(abspath $(B)) tests/run-integration.sh

check-unit: all
	SPARK_BUILD=$(abspath $(B)) tests/run-unit.sh $(UNIT_TESTS)

check-integration: all
	SPARK_BUILD=$(abspath $(B)) tests/run-integration.sh

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(UNITDIR)
	install -m 755 $(B)/spark-master $(B)/spark-worker $(B)/spark-driver $(DESTDIR)$(SBINDIR)/
	install -m 755 $(B)/spark-executor $(DESTDIR)$(LIBEXECDIR)/
	install -m 755 $(B)/sparkctl $(DESTDIR)$(BINDIR)/
	if ls units/*.service units/*.slice >/dev/null 2>&1; then install -m 644 units/*.service units/*.slice $(DESTDIR)$(UNITDIR)/; fi
	if ls conf/*.conf >/dev/null 2>&1; then install -d $(DESTDIR)$(SYSCONFDIR)/spark && install -m 644 conf/*.conf $(DESTDIR)$(SYSCONFDIR)/spark/; fi
	for s in 1 5 8; do for f in docs/*.$$s daemons/*/*.$$s tools/*/*.$$s; do [ ! -e $$f ] || install -D -m 644 $$f $(DESTDIR)$(MANDIR)/man$$s/$${f##*/}; done; done
	for f in units/*.sysusers; do [ ! -e $$f ] || install -D -m 644 $$f $(DESTDIR)$(SYSUSERSDIR)/$$(basename $$f .sysusers).conf; done
	for f in units/*.tmpfiles; do [ ! -e $$f ] || install -D -m 644 $$f $(DESTDIR)$(TMPFILESDIR)/$$(basename $$f .tmpfiles).conf; done

demo: all
	tools/demo.sh

clean:
	rm -rf build build-san

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

# --- packages and system tests (packaging/, tests/system/) ---------------------
# `make deb` and `make rpm` build the packages of SPEC §8 from a copy of the
# source tree into build/packages/ (and run lintian / rpmlint on them);
# `make check-system` (root) installs the .debs in booted systemd-nspawn
# containers and runs a cluster from them (tests/system/run.sh).
PACKAGES_DIR := build/packages
.PHONY: deb rpm check-system
deb:
	packaging/build-deb.sh $(VERSION) $(PACKAGES_DIR)
rpm:
	packaging/build-rpm.sh $(VERSION) $(PACKAGES_DIR)
check-system: deb rpm
	SPARK_PACKAGES=$(abspath $(PACKAGES_DIR)) tests/system/run.sh
