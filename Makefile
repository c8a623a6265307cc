# snowflake: PGXS build of a C++17 PostgreSQL extension.
#
# Targets for people and CI:
#   make            build the extension; first checks that the headers it needs are there
#                   and names the packages to install if not (scripts/check-build-deps.sh;
#                   it installs nothing: `make deps` installs every package on Debian)
#   make install    install it into the PostgreSQL found by pg_config
#   make test       build, install, run every test suite; ends with "N passed, N failed"
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
# Warnings are errors in the project's own builds (make test, CI: WERROR=-Werror),
# not in a user's plain `make install`.
#
# `make` also builds build/snowflake-inspect, the id inspector (src/inspect/),
# and `make install` installs it into $(pg_config --bindir) beside the server
# programs (PGXS SCRIPTS_built: installed with mode 755, removed by clean),
# its man page into $(pg_config --mandir)/man1 and its bash completion into
# $(pg_config --sharedir)/bash-completion.

EXTENSION   = snowflake
MODULE_big  = snowflake
DATA        = snowflake--1.0.sql snowflake--1.1.sql snowflake--1.2.sql snowflake--1.0--1.1.sql snowflake--1.1--1.2.sql

CORE_SRCS = src/core/generator.cpp src/core/uuid.cpp src/core/mark.cpp src/core/epoch.cpp \
            src/core/reservation.cpp src/core/lease.cpp src/core/handover.cpp src/core/etcd_schema.cpp \
            src/core/endpoints.cpp src/core/clock_health.cpp src/core/http_api.cpp src/core/http_limits.cpp \
            src/core/prometheus.cpp src/core/promotion.cpp src/core/time.cpp src/core/text.cpp \
            src/core/backup.cpp src/core/position.cpp src/core/wal_record.cpp
PG_SRCS   = src/pg/module.cpp src/pg/ereport_guard.cpp src/pg/guc.cpp src/pg/clock.cpp src/pg/shmem.cpp \
            src/pg/stats.cpp src/pg/id_path.cpp src/pg/nextval.cpp src/pg/health.cpp \
            src/pg/lease_state.cpp src/pg/reservation_limit.cpp src/pg/bgworker.cpp \
            src/pg/mark_worker.cpp src/pg/mark_file.cpp src/pg/decode.cpp src/pg/uuidv7.cpp \
            src/pg/lease_worker.cpp src/pg/http_worker.cpp src/pg/wal.cpp
ETCD_SRCS = src/etcd/client.cpp src/etcd/coordinator.cpp
COORD_SRCS = src/coord/lease_driver.cpp
ZK_SRCS = src/zk/coordinator.cpp
OBJS = $(CORE_SRCS:.cpp=.o) $(PG_SRCS:.cpp=.o) $(ETCD_SRCS:.cpp=.o) $(COORD_SRCS:.cpp=.o) $(ZK_SRCS:.cpp=.o)

# The id inspector: its decisions in inspect.cpp (unit-tested), I/O in main.cpp.
INSPECT_SRCS  = src/inspect/inspect.cpp
SCRIPTS_built = build/snowflake-inspect

PG_CONFIG ?= pg_config
export PG_CONFIG
PGXS := $(shell $(PG_CONFIG) --pgxs)

# PostgreSQL's headers as system headers, so that our warnings flags apply
# to our code only.
PG_CPPFLAGS = -isystem $(shell $(PG_CONFIG) --includedir-server)
WERROR     ?=
PG_CXXFLAGS = -std=c++17 -fno-exceptions -Wno-register -Wall -Wextra $(WERROR)
SHLIB_LINK  = -lstdc++ -lcurl -lmicrohttpd -lzookeeper_st

# make installcheck: the preloaded pg_regress suites on a temporary instance
# (test/regress.sh runs the same three runs for make test). Two more runs,
# without a worker id and without preload, come first (see below).
REGRESS      = generator decode bad_input settings uuidv7
REGRESS_OPTS = --temp-instance=./tmp_check --temp-config=test/regress/preload.conf \
               --load-extension=snowflake
EXTRA_CLEAN  = tmp_check_no_preload tmp_check_no_worker_id

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
uninstall: uninstall-inspect-extras
uninstall-inspect-extras:
	rm -f '$(DESTDIR)$(mandir)/man1/snowflake-inspect.1' '$(DESTDIR)$(datadir)/bash-completion/snowflake-inspect'

# PGXS tracks no header dependencies: rebuild every object when a header changes.
$(OBJS): $(wildcard src/core/*.hpp src/pg/*.hpp src/etcd/*.hpp src/coord/*.hpp src/zk/*.hpp)
# nlohmann-json without exceptions (the extension builds with -fno-exceptions).
$(ETCD_SRCS:.cpp=.o): PG_CXXFLAGS += -DJSON_NOEXCEPTION
# /metrics names the library's version (snowflake_build_info).
src/pg/http_worker.o: override CXXFLAGS += -DSNOWFLAKE_VERSION='"$(SNOWFLAKE_VERSION)"'
src/pg/http_worker.o: snowflake.control

# ---------------------------------------------------------------------------
# Everything below is ours, not PGXS's.

BUILD    := build
GTEST_LIBS := -lgtest -lgtest_main -pthread
CORE_CXXFLAGS := -std=c++17 -O2 -g -Wall -Wextra -Werror -Isrc
UNIT_SRCS := $(wildcard test/unit/*.cpp)

.PHONY: deps installed unit unit-sanitize test demo demo-cluster bench test-matrix deb nemesis \
        installcheck-no-worker-id installcheck-no-preload

deps:
	@scripts/deps.sh

# snowflake-inspect, built on the core; its version is the extension's.
SNOWFLAKE_VERSION := $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(srcdir)/snowflake.control)
# Installed for users: warnings are errors only in the project's builds.
INSPECT_CXXFLAGS := -std=c++17 -O2 -g -Wall -Wextra $(WERROR) -I$(srcdir)/src
$(BUILD)/snowflake-inspect: src/inspect/main.cpp $(INSPECT_SRCS) $(CORE_SRCS) $(wildcard src/core/*.hpp src/inspect/*.hpp) snowflake.control
	@mkdir -p $(BUILD)
	$(CXX) $(INSPECT_CXXFLAGS) -DSNOWFLAKE_VERSION='"$(SNOWFLAKE_VERSION)"' -o $@ \
	    $(filter %.cpp,$^)

# Core and inspector unit tests: pure C++, no server.
$(BUILD)/unit_tests: $(UNIT_SRCS) $(CORE_SRCS) $(INSPECT_SRCS) $(wildcard src/core/*.hpp src/inspect/*.hpp)
	@mkdir -p $(BUILD)
	$(CXX) $(CORE_CXXFLAGS) -o $@ $(UNIT_SRCS) $(CORE_SRCS) $(INSPECT_SRCS) $(GTEST_LIBS)

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer.
$(BUILD)/unit_tests_sanitized: $(UNIT_SRCS) $(CORE_SRCS) $(INSPECT_SRCS) $(wildcard src/core/*.hpp src/inspect/*.hpp)
	@mkdir -p $(BUILD)
	$(CXX) $(CORE_CXXFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	    -fno-sanitize-recover=all -o $@ $(UNIT_SRCS) $(CORE_SRCS) $(INSPECT_SRCS) $(GTEST_LIBS)

# The etcd gateway client and the lease driver (src/etcd), built the way the
# extension builds its code (no exceptions), and their tests against a real
# etcd (test/etcd_client.sh starts one) and a misbehaving fake (libmicrohttpd).
ETCD_CXXFLAGS := $(CORE_CXXFLAGS) -fno-exceptions -DJSON_NOEXCEPTION
ETCD_LIBS := -lcurl
ETCD_TEST_SRCS := $(wildcard test/etcd/*.cpp)

$(BUILD)/etcd_client.o: src/etcd/client.cpp src/etcd/client.hpp
	@mkdir -p $(BUILD)
	$(CXX) $(ETCD_CXXFLAGS) -c -o $@ src/etcd/client.cpp

$(BUILD)/etcd_coordinator.o: src/etcd/coordinator.cpp $(wildcard src/etcd/*.hpp src/core/*.hpp)
	@mkdir -p $(BUILD)
	$(CXX) $(ETCD_CXXFLAGS) -c -o $@ src/etcd/coordinator.cpp

$(BUILD)/coord_lease_driver.o: src/coord/lease_driver.cpp $(wildcard src/coord/*.hpp src/core/*.hpp)
	@mkdir -p $(BUILD)
	$(CXX) $(ETCD_CXXFLAGS) -c -o $@ src/coord/lease_driver.cpp

ETCD_OBJS := $(BUILD)/etcd_client.o $(BUILD)/etcd_coordinator.o $(BUILD)/coord_lease_driver.o

$(BUILD)/etcd_client_tests: $(ETCD_TEST_SRCS) $(wildcard test/etcd/*.hpp) $(ETCD_OBJS) \
                            $(CORE_SRCS) $(wildcard src/core/*.hpp)
	$(CXX) $(CORE_CXXFLAGS) -o $@ $(ETCD_TEST_SRCS) $(ETCD_OBJS) $(CORE_SRCS) \
	    $(GTEST_LIBS) $(ETCD_LIBS) -lmicrohttpd

# The same under AddressSanitizer and UndefinedBehaviorSanitizer, on demand
# (make build/etcd_client_tests_sanitized, then
# ETCD_CLIENT_TESTS=build/etcd_client_tests_sanitized test/etcd_client.sh):
# it takes minutes to build, so make test leaves it out.
SANITIZE := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
$(BUILD)/etcd_client_tests_sanitized: $(ETCD_TEST_SRCS) $(wildcard test/etcd/*.hpp) $(ETCD_SRCS) $(COORD_SRCS) \
                                      $(wildcard src/etcd/*.hpp src/coord/*.hpp) $(CORE_SRCS) \
                                      $(wildcard src/core/*.hpp)
	@mkdir -p $(BUILD)
	$(CXX) $(ETCD_CXXFLAGS) $(SANITIZE) -c -o $(BUILD)/etcd_client_sanitized.o src/etcd/client.cpp
	$(CXX) $(ETCD_CXXFLAGS) $(SANITIZE) -c -o $(BUILD)/etcd_coordinator_sanitized.o src/etcd/coordinator.cpp
	$(CXX) $(ETCD_CXXFLAGS) $(SANITIZE) -c -o $(BUILD)/coord_lease_driver_sanitized.o src/coord/lease_driver.cpp
	$(CXX) $(CORE_CXXFLAGS) $(SANITIZE) -o $@ $(ETCD_TEST_SRCS) $(BUILD)/etcd_client_sanitized.o \
	    $(BUILD)/etcd_coordinator_sanitized.o $(BUILD)/coord_lease_driver_sanitized.o $(CORE_SRCS) \
	    $(GTEST_LIBS) $(ETCD_LIBS) -lmicrohttpd

unit: $(BUILD)/unit_tests
	$(BUILD)/unit_tests

unit-sanitize: $(BUILD)/unit_tests_sanitized
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(BUILD)/unit_tests_sanitized

# Dependencies, build and install: what test, demo and bench start from.
installed: deps
	$(MAKE) all WERROR=-Werror
	$(MAKE) install

test: installed
	$(MAKE) $(BUILD)/unit_tests $(BUILD)/unit_tests_sanitized $(BUILD)/etcd_client_tests
	test/run_all.sh

# The nemesis suite, longer than make test's 2 minutes (docs/nemesis.md):
# make nemesis DURATION=600 SEED=1234; COORDINATOR=zookeeper runs it against
# a ZooKeeper ensemble instead of etcd.
DURATION ?= 600
SEED ?=
COORDINATOR ?= etcd
nemesis: installed
	COORDINATOR=$(COORDINATOR) DURATION=$(DURATION) SEED=$(SEED) test/nemesis/run.sh

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
	    --dbname=$(CONTRIB_TESTDB) no_preload uuidv7
installcheck-no-worker-id: submake
	@mkdir -p results/no_worker_id
	$(pg_regress_installcheck) --temp-instance=./tmp_check_no_worker_id \
	    --temp-config=test/regress/no_worker_id.conf --outputdir=./results/no_worker_id \
	    --dbname=$(CONTRIB_TESTDB) no_worker_id

demo: installed
	scripts/demo.sh

demo-cluster: installed
	COORDINATOR=$(or $(COORDINATOR),etcd) scripts/demo_cluster.sh

bench: installed
	bench/run.sh

# Google Benchmark of the core (bench/core_bench.cpp).
$(BUILD)/core_bench: bench/core_bench.cpp $(CORE_SRCS) $(wildcard src/core/*.hpp)
	@mkdir -p $(BUILD)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -Isrc -o $@ bench/core_bench.cpp $(CORE_SRCS) -lbenchmark -pthread
