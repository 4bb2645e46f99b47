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
BASHCOMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
VERSION    := 0.1.0

CC      ?= cc
PKGS    := libsystemd libconfig libprotobuf-c libmicrohttpd
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ifeq ($(SANITIZE),1)
B       := build-san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -DSPARK_SANITIZE
# what the libraries leak, not we (tests/lsan.supp says which and why)
export LSAN_OPTIONS ?= suppressions=$(CURDIR)/tests/lsan.supp
else
B       := build
SANFLAGS :=
endif
# pkg-config runs once per make, not once per compile: CPPFLAGS may come
# from the environment (dpkg's buildflags), and such a variable stays
# recursively expanded through +=.
PKG_CPPFLAGS := $(shell pkg-config --cflags $(PKGS))
CPPFLAGS += -D_GNU_SOURCE -DSPARK_VERSION='"$(VERSION)"' -I$(B)/gen -Icommon -Idaemons/shared -Iinclude \
            $(PKG_CPPFLAGS)
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(SANFLAGS) -MMD -MP
LDLIBS  := $(shell pkg-config --libs $(PKGS)) -lnng -lmbedtls -lmbedx509 -lmbedcrypto -lpthread -ldl -lm
# libcheck is needed by the unit tests only, so `make all` (the packages'
# build) does not ask for it: expanded, once, by the first test link.
CHECK_LIBS = $(eval CHECK_LIBS := $$(shell pkg-config --libs check))$(CHECK_LIBS)

# spark-executor is started once per executor, so its start-up is part of
# every executor's launch.  Where their archives are installed (Debian's
# -dev packages ship them), nng with its mbedtls, protobuf-c and libconfig
# are linked into it statically: 6 fewer shared objects to map and
# relocate, about 2 ms of each start on the test machines (bench/README.md).
# Debian ships no archive of libsystemd: the executor links none, but its
# own implementation of the few sd-event and journal calls it makes
# (daemons/executor/sd-subset/), and so loads libc alone: seven shared
# objects fewer again (libsystemd and the six it needs), about 2 ms more.
# EXECUTOR_STATIC=0 links the others like the other programs do.
EXECUTOR_ARCHIVES := nng mbedtls mbedx509 mbedcrypto protobuf-c config
ifndef EXECUTOR_STATIC
EXECUTOR_STATIC := $(if $(filter-out /%,$(foreach l,$(EXECUTOR_ARCHIVES),$(shell $(CC) -print-file-name=lib$(l).a))),0,1)
endif
ifeq ($(EXECUTOR_STATIC),1)
EXECUTOR_LDLIBS := -Wl,-Bstatic $(addprefix -l,$(EXECUTOR_ARCHIVES)) -Wl,-Bdynamic -lpthread -ldl -lm
else
EXECUTOR_LDLIBS := $(filter-out -lsystemd,$(LDLIBS))
endif
SD_SUBSET_OBJS = $(call objs,$(wildcard daemons/executor/sd-subset/*.c))

MODULES  := common daemons/shared daemons/master daemons/worker daemons/driver daemons/executor tools/sparkctl
PROGRAMS := spark-master spark-worker spark-driver spark-executor sparkctl
prog_dir  = $(if $(filter sparkctl,$(1)),tools/sparkctl,daemons/$(patsubst spark-%,%,$(1)))

PROTO_C  := $(B)/gen/spark.pb-c.c
PROTO_H  := $(B)/gen/spark.pb-c.h

lib_srcs  = $(filter-out $(1)/main.c $(1)/test-%.c $(1)/fuzz-%.c,$(wildcard $(1)/*.c))
objs      = $(patsubst %.c,$(B)/obj/%.o,$(1))
COMMON_A := $(B)/lib/daemons-shared.a $(B)/lib/common.a

.PHONY: all check check-unit check-integration check-observability clean install demo bench
all: $(addprefix $(B)/,$(PROGRAMS)) examples

# Everything built depends on the flags stamp, a file that holds the flags
# and settings of the last build and is rewritten (so newer) only when they
# change: a build with other CFLAGS, VERSION, SANITIZE, EXECUTOR_STATIC,
# LDFLAGS or compiler rebuilds everything instead of mixing old objects in.
# Checked while the Makefile is read, so `make -n` stays quiet when nothing
# changed; a dry run (-n) with other flags shows the rebuild without
# writing the stamp.
FLAGS_STAMP := $(B)/flags.stamp
BUILD_FLAGS := CC=$(CC) CPPFLAGS=$(CPPFLAGS) CFLAGS=$(ALL_CFLAGS) LDFLAGS=$(LDFLAGS) \
               LDLIBS=$(LDLIBS) EXECUTOR_STATIC=$(EXECUTOR_STATIC) EXECUTOR_LDLIBS=$(EXECUTOR_LDLIBS) \
               VERSION=$(VERSION) SANITIZE=$(SANITIZE)
ifneq ($(filter-out clean clean-fuzz,$(or $(MAKECMDGOALS),all)),)
ifneq ($(BUILD_FLAGS),$(file <$(FLAGS_STAMP)))
ifeq ($(findstring n,$(firstword -$(MAKEFLAGS))),)
$(shell mkdir -p $(B))
$(file >$(FLAGS_STAMP),$(BUILD_FLAGS))
else
$(FLAGS_STAMP): FORCE
endif
endif
endif
.PHONY: FORCE
FORCE:
$(FLAGS_STAMP):
	@mkdir -p $(dir $@)
	printf '%s\n' '$(subst ','\'',$(BUILD_FLAGS))' >$@
# The files a link takes from its prerequisites (not the stamp).
link_inputs = $(filter %.o %.a,$^)

$(PROTO_C) $(PROTO_H) &: proto/spark.proto
	@mkdir -p $(B)/gen
	protoc-c --proto_path=proto --c_out=$(B)/gen $<

$(B)/obj/gen/spark.pb-c.o: $(PROTO_C) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -std=gnu11 $(CFLAGS) $(SANFLAGS) -c -o $@ $<

# The web UI's files, embedded in the daemons (daemons/shared/ui-assets.h).
UI_FILES := $(sort $(wildcard daemons/shared/ui/*))
$(B)/gen/ui-assets.c: $(UI_FILES) tools/embed-files.sh
	@mkdir -p $(dir $@)
	tools/embed-files.sh $@ $(UI_FILES)
$(B)/obj/gen/ui-assets.o: $(B)/gen/ui-assets.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(B)/obj/%.o: %.c $(FLAGS_STAMP) | $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# One archive per module.
define module_rules
$(B)/lib/$(subst /,-,$(1)).a: $(call objs,$(call lib_srcs,$(1))) $(if $(filter common,$(1)),$(B)/obj/gen/spark.pb-c.o) \
		$(if $(filter daemons/shared,$(1)),$(B)/obj/gen/ui-assets.o)
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
UNIT_TESTS += $(patsubst $(1)/test-%.c,$(B)/tests/test-%,$(wildcard $(1)/test-*.c))
$(patsubst $(1)/test-%.c,$(B)/tests/test-%,$(wildcard $(1)/test-*.c)): $(B)/tests/test-%: $(B)/obj/$(1)/test-%.o $(B)/lib/$(subst /,-,$(1)).a $(COMMON_A)
	@mkdir -p $$(dir $$@)
	$$(CC) $(ALL_CFLAGS) $$(LDFLAGS) -o $$@ $$(link_inputs) $$(CHECK_LIBS) $$(LDLIBS)
endef
$(foreach m,$(MODULES),$(eval $(call module_rules,$(m))))

define program_rule
$(B)/$(1): $(B)/obj/$(call prog_dir,$(1))/main.o $(B)/lib/$(subst /,-,$(call prog_dir,$(1))).a $(COMMON_A) $(FLAGS_STAMP)
	$$(CC) $(ALL_CFLAGS) $$(LDFLAGS) -o $$@ $$(link_inputs) $$(LDLIBS)
endef
$(foreach p,$(PROGRAMS),$(eval $(call program_rule,$(p))))
$(B)/spark-executor: LDLIBS = $(EXECUTOR_LDLIBS)
# sparkctl too: each command is a process started by a user or a script
# (and a submission's latency starts with it); its three sd-event calls are
# sd-subset's, and none runs, as it makes no event loop.  Measured on the
# test machines, `sparkctl --version` took 3.7 to 5.2 ms more than
# /bin/true linked against libsystemd and the others, 1.3 ms more static.
$(B)/sparkctl: LDLIBS = $(EXECUTOR_LDLIBS)
$(B)/sparkctl: $(SD_SUBSET_OBJS)
# The executor and its module's tests: sd-event from sd-subset, not from
# libsystemd, so that the tests run the loop the executor runs (and a call
# sd-subset lacks fails the link rather than mixing the two).
EXECUTOR_TESTS = $(patsubst daemons/executor/test-%.c,$(B)/tests/test-%,$(wildcard daemons/executor/test-*.c))
$(B)/spark-executor $(EXECUTOR_TESTS): $(SD_SUBSET_OBJS)
$(EXECUTOR_TESTS): LDLIBS := $(filter-out -lsystemd,$(LDLIBS))
# The master's zookeeper recovery mode (docs/ha.md): the master and the
# programs built from its module only.
ZK_LIBS := -lzookeeper_mt
$(B)/spark-master: LDLIBS += $(ZK_LIBS)
$(patsubst daemons/master/test-%.c,$(B)/tests/test-%,$(wildcard daemons/master/test-*.c)): LDLIBS += $(ZK_LIBS)

# Helper programs used only by tests (e.g. a fake executor binary).  A
# static pattern rule, so that their objects are named targets, not
# intermediate files that make deletes (and rebuilds on the next run).
TEST_HELPERS := $(patsubst tests/helpers/%.c,$(B)/tests/helpers/%,$(wildcard tests/helpers/*.c))
$(TEST_HELPERS): $(B)/tests/helpers/%: $(B)/obj/tests/helpers/%.o $(COMMON_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(link_inputs) $(LDLIBS)

# Shared objects of function tasks: the examples, and the test tasks.  Built
# without sanitizers: they are loaded into whichever executor runs them.
EXAMPLE_LIBS := $(patsubst examples/%.c,$(B)/examples/%.so,$(wildcard examples/*.c))
TASK_LIBS := $(patsubst tests/helpers/tasks/%.c,$(B)/tests/helpers/tasks/%.so,$(wildcard tests/helpers/tasks/*.c))
$(B)/examples/%.so: examples/%.c include/spark/task.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -shared -fPIC -Iinclude -o $@ $<
$(B)/tests/helpers/tasks/%.so: tests/helpers/tasks/%.c include/spark/task.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) -Wno-missing-prototypes $(CFLAGS) -shared -fPIC -Iinclude -o $@ $<

.PHONY: unit-tests test-helpers examples
unit-tests: $(UNIT_TESTS)
test-helpers: $(TEST_HELPERS) $(TASK_LIBS)
examples: $(EXAMPLE_LIBS)

# `make check`: unit tests, then black-box tests against a private systemd
# user manager started by tests/harness.  The tests and their helpers are
# built here, not by `make all`.
check: all unit-tests test-helpers
	SPARK_BUILD=$(abspath $(B)) tests/run-unit.sh $(UNIT_TESTS)
	SPARK_BUILD=$(abspath $(B)) tests/run-integration.sh

check-unit: all unit-tests
	SPARK_BUILD=$(abspath $(B)) tests/run-unit.sh $(UNIT_TESTS)

check-integration: all test-helpers
	SPARK_BUILD=$(abspath $(B)) tests/run-integration.sh

# The observability suites with real heavy servers (tests/observability):
# Debian's prometheus scraping a cluster, headless chromium on the web UI.
# Each starts its server once; not part of check-integration, so that the
# sanitizer pass does not run them again.
check-observability: all test-helpers
	SPARK_BUILD=$(abspath $(B)) tests/run-integration.sh $(wildcard tests/observability/test-*.sh)

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(UNITDIR)
	install -m 755 $(B)/spark-master $(B)/spark-worker $(B)/spark-driver $(DESTDIR)$(SBINDIR)/
	install -m 755 $(B)/spark-executor $(DESTDIR)$(LIBEXECDIR)/
	install -m 755 $(B)/sparkctl tools/spark-tls $(DESTDIR)$(BINDIR)/
	if ls units/*.service units/*.slice >/dev/null 2>&1; then install -m 644 units/*.service units/*.slice $(DESTDIR)$(UNITDIR)/; fi
	if ls conf/*.conf >/dev/null 2>&1; then install -d $(DESTDIR)$(SYSCONFDIR)/spark && install -m 644 conf/*.conf $(DESTDIR)$(SYSCONFDIR)/spark/; fi
	install -D -m 644 include/spark/task.h $(DESTDIR)$(PREFIX)/include/spark/task.h
	install -D -m 644 tools/completion/sparkctl.bash $(DESTDIR)$(BASHCOMPLETIONDIR)/sparkctl
	install -D -m 644 packaging/prometheus/spark-alerts.yml $(DESTDIR)$(PREFIX)/share/spark/prometheus/spark-alerts.yml
	install -D -m 644 packaging/grafana/spark-dashboard.json $(DESTDIR)$(PREFIX)/share/spark/grafana/spark-dashboard.json
	for s in 1 3 5 7 8; do for f in docs/*.$$s; do [ ! -e $$f ] || install -D -m 644 $$f $(DESTDIR)$(MANDIR)/man$$s/$${f##*/}; done; done
	for f in units/*.sysusers; do [ ! -e $$f ] || install -D -m 644 $$f $(DESTDIR)$(SYSUSERSDIR)/$$(basename $$f .sysusers).conf; done
	for f in units/*.tmpfiles; do [ ! -e $$f ] || install -D -m 644 $$f $(DESTDIR)$(TMPFILESDIR)/$$(basename $$f .tmpfiles).conf; done

demo: all
	tools/demo.sh

# --- fuzzing (libFuzzer) ------------------------------------------------------
# Every fuzz-*.c in a module is a libFuzzer target (except the shared harness
# code in FUZZ_HELPERS), built with clang into build-fuzz/ together with its
# own copy of the module archives (-fsanitize=fuzzer-no-link,address,undefined).
# Inputs: tests/fuzz/<target>/seeds/ (the seed corpus, regenerate with
# `make fuzz-seeds`) and tests/fuzz/<target>/regressions/ (inputs that once
# crashed: replayed by fuzz-smoke); what a run finds goes to
# build-fuzz/corpus/<target>/, crashes to build-fuzz/artifacts/.
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="fuzz-master ..."]
#   make fuzz-smoke            replay every regression and seed, then 15 s each
FB            := build-fuzz
FUZZ_CC       ?= clang
FUZZ_SECONDS  ?= 60
FUZZ_SMOKE_SECONDS ?= 15
FUZZ_FLAGS    ?=
FUZZ_SAN      := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS   := -std=gnu11 $(WARN) -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP
FUZZ_CPPFLAGS := $(subst -I$(B)/gen,-I$(FB)/gen,$(CPPFLAGS))
FUZZ_HELPERS  := common/fuzz-util.c common/fuzz-messages.c common/fuzz-rpc.c
FUZZ_SRCS     := $(filter-out $(FUZZ_HELPERS),$(wildcard $(addsuffix /fuzz-*.c,$(MODULES))))
FUZZ_ALL      := $(notdir $(basename $(FUZZ_SRCS)))
FUZZ_TARGETS  ?= $(FUZZ_ALL)
FUZZ_BINS     := $(addprefix $(FB)/fuzz/,$(FUZZ_ALL))
fuzz_src       = $(filter %/$(1).c,$(FUZZ_SRCS))
fuzz_module    = $(patsubst %/,%,$(dir $(call fuzz_src,$(1))))
FUZZ_ENV      := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/fuzz/lsan.supp \
                 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

$(FB)/gen/spark.pb-c.c $(FB)/gen/spark.pb-c.h &: proto/spark.proto
	@mkdir -p $(FB)/gen
	protoc-c --proto_path=proto --c_out=$(FB)/gen $<

$(FB)/obj/gen/spark.pb-c.o: $(FB)/gen/spark.pb-c.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) -std=gnu11 -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FB)/gen/ui-assets.c: $(UI_FILES) tools/embed-files.sh
	@mkdir -p $(dir $@)
	tools/embed-files.sh $@ $(UI_FILES)
$(FB)/obj/gen/ui-assets.o: $(FB)/gen/ui-assets.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -Idaemons/shared -c -o $@ $<

$(FB)/obj/%.o: %.c | $(FB)/gen/spark.pb-c.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -c -o $@ $<

define fuzz_module_rules
$(FB)/lib/$(subst /,-,$(1)).a: $(patsubst %.c,$(FB)/obj/%.o,$(call lib_srcs,$(1))) $(if $(filter common,$(1)),$(FB)/obj/gen/spark.pb-c.o) \
		$(if $(filter daemons/shared,$(1)),$(FB)/obj/gen/ui-assets.o)
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach m,$(MODULES),$(eval $(call fuzz_module_rules,$(m))))

FUZZ_COMMON_A := $(FB)/lib/daemons-shared.a $(FB)/lib/common.a
define fuzz_target_rule
$(FB)/fuzz/$(1): $(FB)/obj/$(call fuzz_module,$(1))/$(1).o $(patsubst %.c,$(FB)/obj/%.o,$(FUZZ_HELPERS)) \
                 $(if $(filter common,$(call fuzz_module,$(1))),,$(FB)/lib/$(subst /,-,$(call fuzz_module,$(1))).a) $(FUZZ_COMMON_A)
	@mkdir -p $$(dir $$@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $$@ $$^ $(LDLIBS) $(if $(filter daemons/master,$(call fuzz_module,$(1))),$(ZK_LIBS))
endef
$(foreach t,$(FUZZ_ALL),$(eval $(call fuzz_target_rule,$(t))))

# fuzz_run TARGET SECONDS: one bounded libFuzzer run over the committed
# corpora; new inputs are kept in build-fuzz/corpus/TARGET.
fuzz_run = mkdir -p $(FB)/corpus/$(1) $(FB)/artifacts tests/fuzz/$(1)/seeds tests/fuzz/$(1)/regressions && \
	$(FUZZ_ENV) $(FB)/fuzz/$(1) -max_total_time=$(2) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix=$(FB)/artifacts/$(1)- $$([ -f tests/fuzz/$(1).dict ] && echo -dict=tests/fuzz/$(1).dict) \
		$(FUZZ_FLAGS) $(FB)/corpus/$(1) tests/fuzz/$(1)/seeds tests/fuzz/$(1)/regressions
# fuzz_replay TARGET: every committed input once (regressions must not crash).
fuzz_replay = files=$$(find tests/fuzz/$(1)/regressions tests/fuzz/$(1)/seeds -type f 2>/dev/null | LC_ALL=C sort); \
	if [ -n "$$files" ]; then $(FUZZ_ENV) $(FB)/fuzz/$(1) -timeout=10 -rss_limit_mb=2048 $$files >$(FB)/replay-$(1).log 2>&1 \
		|| { tail -n 60 $(FB)/replay-$(1).log; echo "fuzz-smoke: $(1): a committed input fails"; exit 1; }; \
	echo "fuzz-smoke: $(1): $$(echo "$$files" | wc -l) committed inputs replayed"; fi

.PHONY: fuzz fuzz-build fuzz-smoke fuzz-seeds clean-fuzz
clean-fuzz:
	rm -rf $(FB)

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do echo "=== $$t: $(FUZZ_SECONDS) s"; $(call fuzz_run,$$t,$(FUZZ_SECONDS)); done

fuzz-smoke: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do $(call fuzz_replay,$$t); done
	@set -e; for t in $(FUZZ_TARGETS); do echo "=== $$t: $(FUZZ_SMOKE_SECONDS) s"; \
		$(call fuzz_run,$$t,$(FUZZ_SMOKE_SECONDS)) >$(FB)/smoke-$$t.log 2>&1 \
		|| { tail -n 80 $(FB)/smoke-$$t.log; echo "fuzz-smoke: $$t FAILED"; exit 1; }; \
		grep -E '^stat::number_of_executed_units' $(FB)/smoke-$$t.log | sed "s/^/$$t: /"; done
	@echo "fuzz-smoke: $(words $(FUZZ_TARGETS)) targets passed"

# Rewrites tests/fuzz/<target>/seeds/ from the encoders (each target's
# LLVMFuzzerInitialize writes its seeds when SPARK_FUZZ_WRITE_SEEDS is set).
fuzz-seeds: fuzz-build
	@set -e; for t in $(FUZZ_ALL); do rm -rf tests/fuzz/$$t/seeds && mkdir -p tests/fuzz/$$t/seeds && \
		SPARK_FUZZ_WRITE_SEEDS=tests/fuzz/$$t/seeds $(FB)/fuzz/$$t && echo "$$t: $$(ls tests/fuzz/$$t/seeds | wc -l) seeds"; done

-include $(shell find $(FB)/obj -name '*.d' 2>/dev/null)

# `make bench` (docs/DESIGN.md §10): builds the programs, the task libraries and the
# bench's own helpers (bench/*.c), then runs bench/run.sh against a private
# systemd user manager.  Never part of `make check`.  `make bench BENCH_TLS=1`
# runs it with every endpoint on tls+tcp:// (bench/README.md).
BENCH_TLS ?= 0
BENCH_PROGS := nng-baseline bench-tool bench-client master-load
BENCH_BINS  := $(addprefix $(B)/bench/,$(BENCH_PROGS) unit-baseline) $(B)/bench/stamp
$(addprefix $(B)/bench/,$(BENCH_PROGS)): $(B)/bench/%: $(B)/obj/bench/%.o $(COMMON_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(link_inputs) $(LDLIBS)
# The StartTransientUnit baseline builds an executor's unit with the
# worker's own code (daemons/worker/unit-properties.c).
$(B)/obj/bench/unit-baseline.o: CPPFLAGS += -Idaemons/worker
$(B)/bench/unit-baseline: $(B)/obj/bench/unit-baseline.o $(B)/lib/daemons-worker.a $(COMMON_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(link_inputs) $(LDLIBS)
# The process a transient unit runs in the StartTransientUnit baseline:
# static, so that its first instruction comes without the loader's work.
$(B)/bench/stamp: bench/stamp.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -static -o $@ $<

.PHONY: bench-build
bench-build: $(addprefix $(B)/,$(PROGRAMS)) $(TASK_LIBS) $(BENCH_BINS)

bench: bench-build
	SPARK_BUILD=$(abspath $(B)) BENCH_TLS=$(BENCH_TLS) bench/run.sh

clean: clean-fuzz
	rm -rf build build-san

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

# --- packages and system tests (packaging/, tests/system/) ---------------------
# `make deb` and `make rpm` build the packages of docs/DESIGN.md §8 from a copy of the
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

# --- fault injection (tests/faults/) --------------------------------------------
# `make check-faults` (root): the fault-injection suite of docs/DESIGN.md §9 — a real
# cluster on a private systemd user manager, one fault per scenario, and a
# table of detection times, retries, lost/duplicate results and leaks.
# FAULTS="executor-kill netns-cut" runs only those scenarios; SANITIZE=1 runs
# the daemons of build-san/ (ASan+UBSan).  About 2.5 minutes.
FAULTS ?=
.PHONY: check-faults
$(B)/tests/faults/fault-stamp: tests/faults/fault-stamp.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -o $@ $<
check-faults: $(addprefix $(B)/,$(PROGRAMS)) $(TASK_LIBS) $(B)/tests/faults/fault-stamp
	SPARK_BUILD=$(abspath $(B)) tests/faults/run.sh $(FAULTS)
