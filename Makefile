# snowflake: PGXS build of a C++17 PostgreSQL extension.
#
# Targets for people and CI:
#   make            build the extension (installs missing Debian packages first: make deps)
#   make install    install it into the PostgreSQL found by pg_config
#   make test       build, install, run every test suite; ends with "N passed, N failed"
#   make demo       build, install, run a throwaway instance and show ids being made
#   make demo-cluster  build, install, show three nodes leasing worker ids from etcd and
#                   issuing ids into one merged table (logical replication), a node dying
#                   and its id taken over once its lease expired
#   make unit       core unit tests only (GoogleTest, no server)
#
# `make` also builds build/snowflake-inspect, the id inspector (src/inspect/),
# and `make install` installs it into $(pg_config --bindir) beside the server
# programs (PGXS SCRIPTS_built: installed with mode 755, removed by clean).

EXTENSION   = snowflake
MODULE_big  = snowflake
DATA        = snowflake--1.0.sql snowflake--1.1.sql snowflake--1.0--1.1.sql

CORE_SRCS = src/core/generator.cpp src/core/uuid.cpp src/core/mark.cpp src/core/epoch.cpp \
            src/core/reservation.cpp src/core/lease.cpp src/core/clock_health.cpp src/core/http_api.cpp
PG_SRCS   = src/pg/module.cpp src/pg/guc.cpp src/pg/clock.cpp src/pg/shmem.cpp src/pg/stats.cpp \
            src/pg/nextval.cpp src/pg/worker.cpp src/pg/mark.cpp src/pg/decode.cpp src/pg/uuid.cpp \
            src/pg/lease_worker.cpp src/pg/http_worker.cpp
ETCD_SRCS = src/etcd/client.cpp
OBJS = $(CORE_SRCS:.cpp=.o) $(PG_SRCS:.cpp=.o) $(ETCD_SRCS:.cpp=.o)

# The id inspector: its decisions in inspect.cpp (unit-tested), I/O in main.cpp.
INSPECT_SRCS  = src/inspect/inspect.cpp
SCRIPTS_built = build/snowflake-inspect

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)

# PostgreSQL's headers as system headers, so that our warnings flags apply
# to our code only.
PG_CPPFLAGS = -isystem $(shell $(PG_CONFIG) --includedir-server)
PG_CXXFLAGS = -std=c++17 -fno-exceptions -Wno-register -Wall -Wextra -Werror
SHLIB_LINK  = -lstdc++ -lcurl -lmicrohttpd

# No JIT bitcode: it would need clang, and these functions are not inlined.
override with_llvm = no

include $(PGXS)

# PGXS tracks no header dependencies: rebuild every object when a header changes.
$(OBJS): $(wildcard src/core/*.hpp src/pg/*.hpp src/etcd/*.hpp)
# nlohmann-json without exceptions (the extension builds with -fno-exceptions).
src/etcd/client.o: PG_CXXFLAGS += -DJSON_NOEXCEPTION

# ---------------------------------------------------------------------------
# Everything below is ours, not PGXS's.

BUILD    := build
GTEST_LIBS := -lgtest -lgtest_main -pthread
CORE_CXXFLAGS := -std=c++17 -O2 -g -Wall -Wextra -Werror -Isrc
UNIT_SRCS := $(wildcard test/unit/*.cpp)

.PHONY: deps installed unit unit-sanitize test demo demo-cluster bench

deps:
	@scripts/deps.sh

# snowflake-inspect, built on the core; its version is the extension's.
SNOWFLAKE_VERSION := $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" snowflake.control)
$(BUILD)/snowflake-inspect: src/inspect/main.cpp $(INSPECT_SRCS) $(CORE_SRCS) $(wildcard src/core/*.hpp src/inspect/*.hpp) snowflake.control
	@mkdir -p $(BUILD)
	$(CXX) $(CORE_CXXFLAGS) -DSNOWFLAKE_VERSION='"$(SNOWFLAKE_VERSION)"' -o $@ \
	    src/inspect/main.cpp $(INSPECT_SRCS) $(CORE_SRCS)

# Core and inspector unit tests: pure C++, no server.
$(BUILD)/unit_tests: $(UNIT_SRCS) $(CORE_SRCS) $(INSPECT_SRCS) $(wildcard src/core/*.hpp src/inspect/*.hpp)
	@mkdir -p $(BUILD)
	$(CXX) $(CORE_CXXFLAGS) -o $@ $(UNIT_SRCS) $(CORE_SRCS) $(INSPECT_SRCS) $(GTEST_LIBS)

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer.
$(BUILD)/unit_tests_sanitized: $(UNIT_SRCS) $(CORE_SRCS) $(INSPECT_SRCS) $(wildcard src/core/*.hpp src/inspect/*.hpp)
	@mkdir -p $(BUILD)
	$(CXX) $(CORE_CXXFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	    -fno-sanitize-recover=all -o $@ $(UNIT_SRCS) $(CORE_SRCS) $(INSPECT_SRCS) $(GTEST_LIBS)

# The etcd gateway client (src/etcd), built the way the extension builds
# its code (no exceptions), and its tests against a real etcd
# (test/etcd_client.sh starts one) and a misbehaving fake (libmicrohttpd).
ETCD_CXXFLAGS := $(CORE_CXXFLAGS) -fno-exceptions -DJSON_NOEXCEPTION
ETCD_LIBS := -lcurl
ETCD_TEST_SRCS := $(wildcard test/etcd/*.cpp)

$(BUILD)/etcd_client.o: src/etcd/client.cpp src/etcd/client.hpp
	@mkdir -p $(BUILD)
	$(CXX) $(ETCD_CXXFLAGS) -c -o $@ src/etcd/client.cpp

$(BUILD)/etcd_client_tests: $(ETCD_TEST_SRCS) $(wildcard test/etcd/*.hpp) $(BUILD)/etcd_client.o \
                            $(CORE_SRCS) $(wildcard src/core/*.hpp)
	$(CXX) $(CORE_CXXFLAGS) -o $@ $(ETCD_TEST_SRCS) $(BUILD)/etcd_client.o $(CORE_SRCS) \
	    $(GTEST_LIBS) $(ETCD_LIBS) -lmicrohttpd

# The same under AddressSanitizer and UndefinedBehaviorSanitizer, on demand
# (make build/etcd_client_tests_sanitized, then
# ETCD_CLIENT_TESTS=build/etcd_client_tests_sanitized test/etcd_client.sh):
# it takes minutes to build, so make test leaves it out.
SANITIZE := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
$(BUILD)/etcd_client_tests_sanitized: $(ETCD_TEST_SRCS) $(wildcard test/etcd/*.hpp) src/etcd/client.cpp \
                                      src/etcd/client.hpp $(CORE_SRCS) $(wildcard src/core/*.hpp)
	@mkdir -p $(BUILD)
	$(CXX) $(ETCD_CXXFLAGS) $(SANITIZE) -c -o $(BUILD)/etcd_client_sanitized.o src/etcd/client.cpp
	$(CXX) $(CORE_CXXFLAGS) $(SANITIZE) -o $@ $(ETCD_TEST_SRCS) $(BUILD)/etcd_client_sanitized.o \
	    $(CORE_SRCS) $(GTEST_LIBS) $(ETCD_LIBS) -lmicrohttpd

unit: $(BUILD)/unit_tests
	$(BUILD)/unit_tests

unit-sanitize: $(BUILD)/unit_tests_sanitized
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(BUILD)/unit_tests_sanitized

# Dependencies, build and install: what test, demo and bench start from.
installed: deps
	$(MAKE) all
	$(MAKE) install

test: installed
	$(MAKE) $(BUILD)/unit_tests $(BUILD)/unit_tests_sanitized $(BUILD)/etcd_client_tests
	test/run_all.sh

demo: installed
	scripts/demo.sh

demo-cluster: installed
	scripts/demo_cluster.sh

bench: installed
	bench/run.sh

# Google Benchmark of the core (bench/core_bench.cpp).
$(BUILD)/core_bench: bench/core_bench.cpp $(CORE_SRCS) $(wildcard src/core/*.hpp)
	@mkdir -p $(BUILD)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -Isrc -o $@ bench/core_bench.cpp $(CORE_SRCS) -lbenchmark -pthread
