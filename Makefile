# snowflake: PGXS build of a C++17 PostgreSQL extension.
#
# Targets for people and CI:
#   make            build the extension; first checks that the headers it needs are there
#                   and names the packages to install if not (scripts/check-build-deps.sh;
#                   it installs nothing: `make deps` installs every package on Debian)
#   make install    install it into the PostgreSQL found by pg_config
#   make test       build, install, run every test suite; ends with "N passed, N failed"
#   make test-clients  build, install, then the client checks (test/clients.sh): Rails'
#                   ActiveRecord, Go's pgx, JDBC, SQLAlchemy, Django against throwaway
#                   instances; installs scripts/deps.sh's group clients (Go, a JDK, Ruby)
#                   first. Opt-in: make test leaves it out
#   make demo       build, install, run a throwaway instance and show ids being made
#   make demo-cluster  build, install, show three nodes leasing worker ids from etcd and
#                   issuing ids into one merged table (logical replication), a node dying
#                   and its id taken over once its lease expired; COORDINATOR=zookeeper:
#                   the same, leasing from a ZooKeeper server (its session timing out)
#   make nemesis    partitions, pauses, kills and clock steps against a 3-member etcd and
#                   six leasing nodes in network namespaces, then a check of every id
#                   (root; DURATION=600 seconds by default, SEED=n replays a schedule,
#                   COORDINATOR=zookeeper against a ZooKeeper ensemble instead;
#                   docs/nemesis.md). make test runs a 2-minute schedule of it.
#   make unit       core unit tests only (GoogleTest, no server)
#   make installcheck  pg_regress suites against the installed PostgreSQL, on
#                   temporary instances (PGXS; run as a non-root user; no apt)
#   make test-matrix   build and test against PostgreSQL 17 and 18 in Debian
#                   chroots (scripts/matrix.sh; root, debootstrap)
#   make deb        Debian package postgresql-N-snowflake (scripts/deb.sh)
#
# PG_CONFIG is set here and only here (scripts and tests take it from the
# environment): make PG_CONFIG=/usr/lib/postgresql/17/bin/pg_config ...
# Warnings are errors in the project's own builds (make test and our other
# targets default to WERROR=-Werror), not in a user's plain `make install`.
#
# `make` also builds build/snowflake-inspect, the id inspector (src/inspect/),
# and `make install` installs it into $(pg_config --bindir) beside the server
# programs (PGXS SCRIPTS_built: installed with mode 755, removed by clean),
# its man page into $(pg_config --mandir)/man1 and its bash completion into
# $(pg_config --sharedir)/bash-completion, and says so when that bindir is not
# on the PATH or that mandir not on man's path (Debian's PostgreSQL: neither).
#   make install-inspect-links  links the command into $(LINK_PREFIX)/bin and
#                   its man page into $(LINK_PREFIX)/share/man/man1 (default
#                   /usr/local: on the PATH and man's path); uninstall-inspect-links
#                   removes them. The Debian packages need neither: the package
#                   snowflake-inspect installs /usr/bin/snowflake-inspect (make deb).
#
# Our own targets (make test, make unit, make build/...) run one job per CPU
# unless -j is given (make -j1 test for one); PGXS's all and install, and
# builds under pg_buildext, get the -j they are given. Objects of the test
# binaries and the inspector are built under build/obj (build/obj-sanitized for
# ASan+UBSan) and, like the extension's, track the headers they include
# (gcc -MMD): touching one source recompiles one object per build.

EXTENSION   = snowflake
MODULE_big  = snowflake
DATA        = snowflake--1.0.sql snowflake--1.1.sql snowflake--1.2.sql snowflake--1.3.sql \
              snowflake--1.0--1.1.sql snowflake--1.1--1.2.sql snowflake--1.2--1.3.sql

# The sources, one list per component; every build below takes its files from
# these lists. A new source file goes into exactly one of them.
#   the pure core (no PostgreSQL; in the extension, the inspector, every test binary)
CORE_SRCS = src/core/generator.cpp src/core/uuid.cpp src/core/mark.cpp src/core/epoch.cpp \
            src/core/reservation.cpp src/core/lease.cpp src/core/handover.cpp src/core/coord_schema.cpp \
            src/core/endpoints.cpp src/core/clock_health.cpp src/core/http_api.cpp src/core/http_request.cpp \
            src/core/http_limits.cpp src/core/prometheus.cpp src/core/promotion.cpp src/core/time.cpp \
            src/core/text.cpp src/core/backup.cpp src/core/position.cpp src/core/wal_record.cpp \
            src/core/text_id.cpp src/core/id_layout.cpp src/core/http_worker_id.cpp
#   the glue (the extension only)
PG_SRCS   = src/pg/module.cpp src/pg/ereport_guard.cpp src/pg/guc.cpp src/pg/clock.cpp src/pg/shmem.cpp \
            src/pg/stats.cpp src/pg/id_path.cpp src/pg/nextval.cpp src/pg/health.cpp \
            src/pg/lease_state.cpp src/pg/reservation_limit.cpp src/pg/bgworker.cpp \
            src/pg/mark_worker.cpp src/pg/mark_file.cpp src/pg/layout_glue.cpp src/pg/decode.cpp src/pg/layouts.cpp src/pg/uuidv7.cpp src/pg/text_ids.cpp \
            src/pg/lease_worker.cpp src/pg/http_worker.cpp src/pg/http_answers.cpp src/pg/token_file.cpp src/pg/wal.cpp
#   the coordinator-neutral lease driver, and each coordinator's client (the extension;
#   the driver and etcd's client also in build/etcd_client_tests, ZooKeeper's in
#   build/zk_client_tests)
COORD_SRCS = src/coord/lease_driver.cpp
ETCD_SRCS  = src/etcd/client.cpp src/etcd/coordinator.cpp
ZK_SRCS    = src/zk/coordinator.cpp
#   the C library libsnowflake_ids (sdk/c: issue 30), over the core and the lease driver
SDK_SRCS   = $(sort $(wildcard sdk/c/src/*.cpp))
SDK_LIB_SRCS = $(SDK_SRCS) $(CORE_SRCS) $(COORD_SRCS) $(ETCD_SRCS) $(ZK_SRCS)
#   the id inspector: its decisions (unit-tested) and its I/O
INSPECT_SRCS = src/inspect/inspect.cpp
INSPECT_MAIN = src/inspect/main.cpp
#   the tests and the benchmark (in the source tree only; not in a VPATH build)
UNIT_TEST_SRCS  = $(sort $(wildcard test/unit/*.cpp))
COORD_TEST_SRCS = $(sort $(wildcard test/coord/*.cpp))
ETCD_TEST_SRCS  = $(sort $(wildcard test/etcd/*.cpp))
ZK_TEST_SRCS    = $(sort $(wildcard test/zk/*.cpp))
SDK_TEST_SRCS   = $(sort $(wildcard test/sdk/*.cpp))
BENCH_SRCS     = bench/core_bench.cpp

OBJS = $(CORE_SRCS:.cpp=.o) $(PG_SRCS:.cpp=.o) $(ETCD_SRCS:.cpp=.o) $(COORD_SRCS:.cpp=.o) $(ZK_SRCS:.cpp=.o)

SCRIPTS_built = build/snowflake-inspect

PG_CONFIG ?= pg_config
export PG_CONFIG
PGXS := $(shell $(PG_CONFIG) --pgxs)

# Our own targets (below): when make is asked for nothing else, warnings are
# errors unless WERROR is given (make WERROR= unit), and it runs in parallel.
OWN_GOALS := test installed unit unit-sanitize bench demo demo-cluster nemesis sdk build/%
ONLY_OWN_GOALS := $(if $(MAKECMDGOALS),$(if $(filter-out $(OWN_GOALS),$(MAKECMDGOALS)),,yes))
ifeq ($(ONLY_OWN_GOALS),yes)
WERROR     ?= -Werror
endif
WERROR     ?=

# PostgreSQL's headers as system headers, so that our warnings flags apply
# to our code only. -MMD -MP: each object's header dependencies, in a .d file
# beside it (included below).
PG_CPPFLAGS = -isystem $(shell $(PG_CONFIG) --includedir-server)
PG_CXXFLAGS = -std=c++17 -fno-exceptions -Wno-register -Wall -Wextra $(WERROR) -MMD -MP
SHLIB_LINK  = -lstdc++ -lcurl -lmicrohttpd -lzookeeper_st

# make installcheck: the preloaded pg_regress suites on a temporary instance
# (test/regress.sh runs the same three runs for make test). Two more runs,
# without a worker id and without preload, come first (see below).
REGRESS      = generator decode bad_input settings uuidv7 text_ids layouts convert
REGRESS_OPTS = --temp-instance=./tmp_check --temp-config=test/regress/preload.conf \
               --load-extension=snowflake
EXTRA_CLEAN  = tmp_check_no_preload tmp_check_no_worker_id $(OBJS:.o=.d) build/obj build/obj-sanitized \
               build/unit_tests build/unit_tests_sanitized build/etcd_client_tests \
               build/etcd_client_tests_sanitized build/zk_client_tests build/core_bench build/obj-pic \
               build/sdk build/sdk_tests build/sdk_c_bench build/sdk_c_smoke

# No JIT bitcode: it would need clang, and these functions are not inlined.
override with_llvm = no

include $(PGXS)

# VPATH builds (pg_buildext for make deb) compile in a directory that has no
# src/ of its own for the objects.
ifdef VPATH
$(shell mkdir -p $(sort $(dir $(OBJS))))
endif

# Before any object is compiled: the headers of libcurl, nlohmann-json,
# libmicrohttpd and the server, or a message naming the packages to install.
.PHONY: check-build-deps
check-build-deps:
	@CXX='$(CXX)' $(srcdir)/scripts/check-build-deps.sh
$(OBJS): | check-build-deps

# snowflake-inspect's man page and bash completion, installed beside the
# server's (pg_config --mandir; the completion in pg_config --sharedir, to be
# sourced or copied: nothing is installed outside PostgreSQL's directories).
.PHONY: install-inspect-extras uninstall-inspect-extras
install: install-inspect-extras
install-inspect-extras:
	$(MKDIR_P) '$(DESTDIR)$(mandir)/man1' '$(DESTDIR)$(datadir)/bash-completion'
	$(INSTALL_DATA) $(srcdir)/src/inspect/snowflake-inspect.1 '$(DESTDIR)$(mandir)/man1/snowflake-inspect.1'
	$(INSTALL_DATA) $(srcdir)/src/inspect/snowflake-inspect.bash-completion \
	    '$(DESTDIR)$(datadir)/bash-completion/snowflake-inspect'
	@if [ -z '$(DESTDIR)' ]; then \
	    case ":$$PATH:" in *':$(bindir):'*) ;; *) echo "note: snowflake-inspect is in $(bindir), which is not on" \
	        "the PATH: run it from there, add it to the PATH, or make install-inspect-links";; esac; \
	    if command -v manpath >/dev/null && ! manpath 2>/dev/null | tr : '\n' | grep -qxF '$(mandir)'; then \
	        echo "note: man does not search $(mandir): man -l $(mandir)/man1/snowflake-inspect.1," \
	            "or MANPATH=$(mandir): (the trailing colon keeps man's own path), or make install-inspect-links"; \
	    fi; \
	fi
uninstall: uninstall-inspect-extras
uninstall-inspect-extras:
	rm -f '$(DESTDIR)$(mandir)/man1/snowflake-inspect.1' '$(DESTDIR)$(datadir)/bash-completion/snowflake-inspect'

# Links to the installed command and man page where a shell and man look.
LINK_PREFIX ?= /usr/local
.PHONY: install-inspect-links uninstall-inspect-links
install-inspect-links:
	$(MKDIR_P) '$(DESTDIR)$(LINK_PREFIX)/bin' '$(DESTDIR)$(LINK_PREFIX)/share/man/man1'
	ln -sfn '$(bindir)/snowflake-inspect' '$(DESTDIR)$(LINK_PREFIX)/bin/snowflake-inspect'
	ln -sfn '$(mandir)/man1/snowflake-inspect.1' '$(DESTDIR)$(LINK_PREFIX)/share/man/man1/snowflake-inspect.1'
uninstall-inspect-links:
	rm -f '$(DESTDIR)$(LINK_PREFIX)/bin/snowflake-inspect' '$(DESTDIR)$(LINK_PREFIX)/share/man/man1/snowflake-inspect.1'

# The extension's objects: the headers each one includes, as the compiler
# listed them (-MMD). An object without that list (not built yet, or built
# by an older Makefile) depends on every header instead: PGXS's .SECONDARY
# has make judge a missing object by its prerequisites alone.
-include $(wildcard $(OBJS:.o=.d))
ALL_HEADERS := $(wildcard $(addprefix $(srcdir)/,src/*/*.hpp src/*/*.h test/*/*.hpp))
untracked = $(foreach o,$(1),$(if $(wildcard $(o:.o=.d)),,$(o)))
$(call untracked,$(OBJS)): $(ALL_HEADERS)
# nlohmann-json without exceptions (the extension builds with -fno-exceptions).
$(ETCD_SRCS:.cpp=.o): PG_CXXFLAGS += -DJSON_NOEXCEPTION
# /metrics names the library's version (snowflake_build_info).
src/pg/http_answers.o: override CXXFLAGS += -DSNOWFLAKE_VERSION='"$(SNOWFLAKE_VERSION)"'
src/pg/http_worker.o: snowflake.control

# ---------------------------------------------------------------------------
# Everything below is ours, not PGXS's.

BUILD    := build
NPROC    := $(shell nproc 2>/dev/null || echo 1)

# One job per CPU for our own targets (OWN_GOALS), when make is started by
# hand (MAKELEVEL 0: a sub-make shares its parent's jobs) on nothing else, in
# the source tree (not a VPATH build: pg_buildext is given its -j by
# dpkg-buildpackage). A -j on the command line wins (make -j1 test).
ifeq ($(ONLY_OWN_GOALS)$(MAKELEVEL)$(filter-out . ./,$(srcdir)),yes0)
MAKEFLAGS += -j$(NPROC)
endif

# The builds of our binaries, each in a directory of its own objects:
#   build/obj            -O2 -g: the inspector, the unit and client tests, core_bench
#   build/obj-sanitized  -O1 under AddressSanitizer and UndefinedBehaviorSanitizer
# Warnings are errors under WERROR=-Werror, the default for our own targets
# (above); an object is compiled once for every binary that links it (make's
# snowflake-inspect shares the core's objects with the tests).
OWN_CXXFLAGS := -std=c++17 -O2 -g -Wall -Wextra -I$(patsubst %/,%,$(srcdir))/src
SANITIZE     := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
DEPFLAGS     := -MMD -MP
OBJ          := $(BUILD)/obj
OBJ_SAN      := $(BUILD)/obj-sanitized
# $(call objs,DIR,SRCS): the objects of SRCS in the build DIR.
objs = $(patsubst %.cpp,$(1)/%.o,$(2))
ALL_OWN_SRCS := $(CORE_SRCS) $(ETCD_SRCS) $(COORD_SRCS) $(ZK_SRCS) $(INSPECT_SRCS) $(INSPECT_MAIN) \
                $(UNIT_TEST_SRCS) $(COORD_TEST_SRCS) $(ETCD_TEST_SRCS) $(ZK_TEST_SRCS) $(BENCH_SRCS) \
                $(SDK_TEST_SRCS)
# $(call deps,DIR,SRCS): their dependency files (-MMD), where they exist.
deps = $(wildcard $(patsubst %.cpp,$(1)/%.d,$(2)))

$(OBJ)/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX) $(OWN_CXXFLAGS) $(WERROR) $(COMPONENT_FLAGS) $(DEPFLAGS) -c -o $@ $<
$(OBJ_SAN)/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX) $(OWN_CXXFLAGS) $(WERROR) $(SANITIZE) $(COMPONENT_FLAGS) $(DEPFLAGS) -c -o $@ $<
# build/obj-pic: the C library's objects (sdk/c and what it links: the core,
# the lease driver, the clients), position-independent for the shared
# library, with only the sf_* functions visible (sdk/c/src/api.hpp).
OBJ_PIC      := $(BUILD)/obj-pic
$(OBJ_PIC)/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX) $(OWN_CXXFLAGS) $(WERROR) -fPIC -fvisibility=hidden -fvisibility-inlines-hidden -fno-exceptions $(COMPONENT_FLAGS) \
	    $(DEPFLAGS) -c -o $@ $<
-include $(call deps,$(OBJ),$(ALL_OWN_SRCS)) $(call deps,$(OBJ_SAN),$(ALL_OWN_SRCS)) $(call deps,$(OBJ_PIC),$(SDK_LIB_SRCS))
$(call untracked,$(call objs,$(OBJ),$(ALL_OWN_SRCS)) $(call objs,$(OBJ_SAN),$(ALL_OWN_SRCS)) \
    $(call objs,$(OBJ_PIC),$(SDK_LIB_SRCS))): $(ALL_HEADERS) $(wildcard sdk/c/include/*.h sdk/c/src/*.hpp)

# Flags of a component, in every build of it: the clients are built the way
# the extension builds them (no exceptions; nlohmann-json without them).
CLIENT_SRCS := $(ETCD_SRCS) $(COORD_SRCS) $(ZK_SRCS)
$(call objs,$(OBJ),$(CLIENT_SRCS)) $(call objs,$(OBJ_SAN),$(CLIENT_SRCS)) $(call objs,$(OBJ_PIC),$(SDK_LIB_SRCS)): \
    COMPONENT_FLAGS := -fno-exceptions -DJSON_NOEXCEPTION
# The C library's sources see its public header (and the core's, as every build).
$(call objs,$(OBJ_PIC),$(SDK_SRCS)): COMPONENT_FLAGS += -Isdk/c/include
# snowflake-inspect's version (inspect.cpp, --version) is the extension's.
SNOWFLAKE_VERSION := $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(srcdir)/snowflake.control)
$(call objs,$(OBJ),$(INSPECT_SRCS)) $(call objs,$(OBJ_SAN),$(INSPECT_SRCS)): \
    COMPONENT_FLAGS := -DSNOWFLAKE_VERSION='"$(SNOWFLAKE_VERSION)"'
$(call objs,$(OBJ),$(INSPECT_SRCS)) $(call objs,$(OBJ_SAN),$(INSPECT_SRCS)): snowflake.control
# make builds the inspector: its objects too wait for the check of the build
# dependencies.
ifneq ($(filter all install,$(or $(MAKECMDGOALS),all)),)
$(call objs,$(OBJ),$(INSPECT_MAIN) $(INSPECT_SRCS) $(CORE_SRCS)): | check-build-deps
endif

GTEST_LIBS := -lgtest -lgtest_main -pthread
CLIENT_TEST_LIBS := $(GTEST_LIBS) -lcurl -lmicrohttpd -lzookeeper_st
# The link line: the objects (not the headers or files they depend on) and LIBS.
link = $(CXX) $(1) -o $@ $(filter %.o,$^) $(2)

# snowflake-inspect (installed for users: make builds it, make install installs it).
$(BUILD)/snowflake-inspect: $(call objs,$(OBJ),$(INSPECT_MAIN) $(INSPECT_SRCS) $(CORE_SRCS))
	$(call link,,)

# Core and inspector unit tests: pure C++, no server.
UNIT_TESTS_SRCS := $(UNIT_TEST_SRCS) $(CORE_SRCS) $(INSPECT_SRCS)
$(BUILD)/unit_tests: $(call objs,$(OBJ),$(UNIT_TESTS_SRCS))
	$(call link,,$(GTEST_LIBS))

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer.
$(BUILD)/unit_tests_sanitized: $(call objs,$(OBJ_SAN),$(UNIT_TESTS_SRCS))
	$(call link,$(SANITIZE),$(GTEST_LIBS))

# The etcd gateway client and the lease driver (src/etcd, src/coord), built
# the way the extension builds its code (no exceptions), and their tests
# (test/etcd: the client; test/coord: the driver over etcd's coordinator)
# against a real etcd (test/etcd_client.sh starts one) and a misbehaving fake
# (libmicrohttpd).
# (The driver's tests build ZooKeeper's coordinator too: test/zk_client.sh
# runs them on ZooKeeper, in build/zk_client_tests.)
CLIENT_TESTS_SRCS := $(COORD_TEST_SRCS) $(ETCD_TEST_SRCS) $(COORD_SRCS) $(ETCD_SRCS) $(ZK_SRCS) $(CORE_SRCS)
$(BUILD)/etcd_client_tests: $(call objs,$(OBJ),$(CLIENT_TESTS_SRCS))
	$(call link,,$(CLIENT_TEST_LIBS))

# The same under AddressSanitizer and UndefinedBehaviorSanitizer, on demand
# (make build/etcd_client_tests_sanitized, then
# ETCD_CLIENT_TESTS=build/etcd_client_tests_sanitized test/etcd_client.sh):
# make test leaves it out.
$(BUILD)/etcd_client_tests_sanitized: $(call objs,$(OBJ_SAN),$(CLIENT_TESTS_SRCS))
	$(call link,$(SANITIZE),$(CLIENT_TEST_LIBS))

# ZooKeeper's coordinator (src/zk), built the way the extension builds it, and
# its tests (test/zk) and the lease driver's (test/coord, those that are not
# etcd's only) against a real standalone ZooKeeper (test/zk_client.sh starts
# one). The driver's tests bring etcd's client in.
ZK_CLIENT_TESTS_SRCS := $(ZK_TEST_SRCS) $(COORD_TEST_SRCS) $(COORD_SRCS) $(ETCD_SRCS) $(ZK_SRCS) $(CORE_SRCS)
$(BUILD)/zk_client_tests: $(call objs,$(OBJ),$(ZK_CLIENT_TESTS_SRCS))
	$(call link,,$(CLIENT_TEST_LIBS))

# libsnowflake_ids (make sdk): the C library of issue 30, shared (with a
# soname) and static, and its pkg-config file; the extension's build does not
# need it. Its tests (test/sdk, against the static library, and against a
# real etcd and ZooKeeper: test/sdk_c.sh) and its benchmark.
SDK_LIBS       := -lcurl -lzookeeper_st -pthread
SDK_SONAME     := libsnowflake_ids.so.1
SDK_VERSION    := $(shell sed -n 's/^\#define SF_IDS_VERSION "\(.*\)"/\1/p' sdk/c/include/snowflake_ids.h 2>/dev/null)
SDK_PREFIX     ?= /usr/local
$(BUILD)/sdk/$(SDK_SONAME): $(call objs,$(OBJ_PIC),$(SDK_LIB_SRCS)) sdk/c/libsnowflake_ids.map
	@mkdir -p $(@D)
	$(CXX) -shared -Wl,-soname,$(SDK_SONAME) -Wl,--no-undefined -Wl,--version-script=sdk/c/libsnowflake_ids.map \
	    -o $@ $(filter %.o,$^) $(SDK_LIBS)
$(BUILD)/sdk/libsnowflake_ids.so: $(BUILD)/sdk/$(SDK_SONAME)
	ln -sf $(SDK_SONAME) $@
$(BUILD)/sdk/libsnowflake_ids.a: $(call objs,$(OBJ_PIC),$(SDK_LIB_SRCS))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $(filter %.o,$^)
$(BUILD)/sdk/snowflake_ids.pc: sdk/c/snowflake_ids.pc.in sdk/c/include/snowflake_ids.h
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(SDK_PREFIX)|' -e 's|@VERSION@|$(SDK_VERSION)|' $< >$@
SDK_OUTPUTS := $(BUILD)/sdk/$(SDK_SONAME) $(BUILD)/sdk/libsnowflake_ids.so $(BUILD)/sdk/libsnowflake_ids.a \
               $(BUILD)/sdk/snowflake_ids.pc
.PHONY: sdk
sdk: $(SDK_OUTPUTS)

# The library's tests, linked with the static library (its objects built as
# the shared library's are); C tests see only the public header.
$(BUILD)/sdk_tests: $(call objs,$(OBJ),$(SDK_TEST_SRCS)) $(BUILD)/sdk/libsnowflake_ids.a
	$(CXX) -o $@ $(filter %.o,$^) $(BUILD)/sdk/libsnowflake_ids.a $(GTEST_LIBS) $(SDK_LIBS)
$(call objs,$(OBJ),$(SDK_TEST_SRCS)): COMPONENT_FLAGS := -Isdk/c/include
# The library from C, linked with the shared library (test/sdk/smoke.c).
$(BUILD)/sdk_c_smoke: test/sdk/smoke.c sdk/c/include/snowflake_ids.h $(BUILD)/sdk/libsnowflake_ids.so
	$(CC) -std=c11 -O2 -Wall -Wextra $(WERROR) -Isdk/c/include -o $@ $< -L$(BUILD)/sdk -lsnowflake_ids \
	    -Wl,-rpath,'$$ORIGIN/sdk'
# The C benchmark (bench/sdk_c_bench.c), linked with the shared library.
$(BUILD)/sdk_c_bench: bench/sdk_c_bench.c sdk/c/include/snowflake_ids.h $(BUILD)/sdk/libsnowflake_ids.so
	$(CC) -std=c11 -O2 -Wall -Wextra $(WERROR) -Isdk/c/include -o $@ $< -L$(BUILD)/sdk -lsnowflake_ids \
	    -Wl,-rpath,'$$ORIGIN/sdk' -pthread

# Google Benchmark of the core (bench/core_bench.cpp).
$(BUILD)/core_bench: $(call objs,$(OBJ),$(BENCH_SRCS) $(CORE_SRCS))
	$(call link,,-lbenchmark -pthread)

.PHONY: deps installed unit unit-sanitize test test-clients demo demo-cluster bench test-matrix deb nemesis \
        installcheck-no-worker-id installcheck-no-preload

deps:
	@scripts/deps.sh

unit: $(BUILD)/unit_tests
	$(BUILD)/unit_tests

unit-sanitize: $(BUILD)/unit_tests_sanitized
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(BUILD)/unit_tests_sanitized

# Dependencies, build and install: what test, demo and bench start from.
installed: deps
	$(MAKE) all WERROR=-Werror
	$(MAKE) install

# The scripts run without this make's job server (MAKEFLAGS, which they could
# not use): a script that calls make (test/etcd_client.sh, bench/run.sh)
# starts a make of its own.
RUN_SCRIPT := env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL

# make test: the extension and the test binaries built at once (in parallel),
# installed, then every suite; the build's time is printed with the suites'
# at the end (test/run_all.sh).
TEST_BINARIES := $(BUILD)/unit_tests $(BUILD)/unit_tests_sanitized $(BUILD)/etcd_client_tests \
                 $(BUILD)/zk_client_tests $(SDK_OUTPUTS) $(BUILD)/sdk_tests $(BUILD)/sdk_c_smoke
test: deps
	@mkdir -p $(BUILD) && date +%s >$(BUILD)/.test-build-start
	$(MAKE) WERROR=-Werror all $(TEST_BINARIES)
	$(MAKE) install
	@$(RUN_SCRIPT) SNOWFLAKE_BUILD_SECONDS=$$(( $$(date +%s) - $$(cat $(BUILD)/.test-build-start) )) \
	    test/run_all.sh

# The client checks (issue 33), opt-in. With their packages installed they run
# in about 20 s, but the packages (a JDK, the Go toolchain, Ruby: about 50 s to
# install on a Debian 12 host) are Debian 12's names (openjdk-17), not tried in
# the version matrix's chroots, which run test/run_all.sh. test/clients.sh
# installs the group clients of scripts/deps.sh.
test-clients: installed
	$(RUN_SCRIPT) test/clients.sh

# The nemesis suite, longer than make test's 2 minutes (docs/nemesis.md):
# make nemesis DURATION=600 SEED=1234; COORDINATOR=zookeeper runs it against
# a ZooKeeper ensemble instead of etcd.
DURATION ?= 600
SEED ?=
COORDINATOR ?= etcd
nemesis: installed
	$(RUN_SCRIPT) COORDINATOR=$(COORDINATOR) DURATION=$(DURATION) SEED=$(SEED) test/nemesis/run.sh

# The other PostgreSQL versions, each in its own Debian chroot.
test-matrix:
	scripts/matrix.sh

# Debian package for the PostgreSQL of PG_CONFIG, into build/deb/.
deb:
	scripts/deb.sh

# installcheck's runs on their own temporary instances, one after the other.
installcheck: installcheck-no-preload
installcheck-no-preload: installcheck-no-worker-id
	@mkdir -p results/no_preload
	$(pg_regress_installcheck) --temp-instance=./tmp_check_no_preload \
	    --temp-config=test/regress/no_preload.conf --outputdir=./results/no_preload \
	    --dbname=$(CONTRIB_TESTDB) no_preload uuidv7 text_ids layouts
installcheck-no-worker-id: submake
	@mkdir -p results/no_worker_id
	$(pg_regress_installcheck) --temp-instance=./tmp_check_no_worker_id \
	    --temp-config=test/regress/no_worker_id.conf --outputdir=./results/no_worker_id \
	    --dbname=$(CONTRIB_TESTDB) no_worker_id

demo: installed
	$(RUN_SCRIPT) scripts/demo.sh

demo-cluster: installed
	$(RUN_SCRIPT) COORDINATOR=$(or $(COORDINATOR),etcd) scripts/demo_cluster.sh

bench: installed
	$(RUN_SCRIPT) bench/run.sh

# The Node.js and Python bindings (make sdk): their rules are in a file of their own.
# Optional: a copy of the sources that builds the extension alone (installcheck,
# the standby suite's 1.2-record build) has no sdk/.
-include $(srcdir)/sdk/bindings.mk
