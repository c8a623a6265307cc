# snowflake: PGXS build of a C++17 PostgreSQL extension.
#
# Targets for people and CI:
#   make            build the extension (installs missing Debian packages first: make deps)
#   make install    install it into the PostgreSQL found by pg_config
#   make test       build, install, run every test suite; ends with "N passed, N failed"
#   make demo       build, install, run a throwaway instance and show ids being made
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

EXTENSION   = snowflake
MODULE_big  = snowflake
DATA        = snowflake--1.0.sql snowflake--1.1.sql snowflake--1.0--1.1.sql

CORE_SRCS = src/core/generator.cpp src/core/uuid.cpp src/core/mark.cpp src/core/epoch.cpp
PG_SRCS   = src/pg/module.cpp src/pg/guc.cpp src/pg/shmem.cpp src/pg/nextval.cpp \
            src/pg/decode.cpp src/pg/uuid.cpp src/pg/mark.cpp
OBJS = $(CORE_SRCS:.cpp=.o) $(PG_SRCS:.cpp=.o)

PG_CONFIG ?= pg_config
export PG_CONFIG
PGXS := $(shell $(PG_CONFIG) --pgxs)

# PostgreSQL's headers as system headers, so that our warnings flags apply
# to our code only.
PG_CPPFLAGS = -isystem $(shell $(PG_CONFIG) --includedir-server)
WERROR     ?=
PG_CXXFLAGS = -std=c++17 -fno-exceptions -Wno-register -Wall -Wextra $(WERROR)
SHLIB_LINK  = -lstdc++

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

# PGXS tracks no header dependencies: rebuild every object when a header changes.
$(OBJS): $(wildcard src/core/*.hpp src/pg/*.hpp)

# ---------------------------------------------------------------------------
# Everything below is ours, not PGXS's.

BUILD    := build
GTEST_LIBS := -lgtest -lgtest_main -pthread
CORE_CXXFLAGS := -std=c++17 -O2 -g -Wall -Wextra -Werror -Isrc
UNIT_SRCS := $(wildcard test/unit/*.cpp)

.PHONY: deps installed unit unit-sanitize test demo bench test-matrix deb \
        installcheck-no-worker-id installcheck-no-preload

deps:
	@scripts/deps.sh

# Core unit tests: pure C++, no server.
$(BUILD)/unit_tests: $(UNIT_SRCS) $(CORE_SRCS) $(wildcard src/core/*.hpp)
	@mkdir -p $(BUILD)
	$(CXX) $(CORE_CXXFLAGS) -o $@ $(UNIT_SRCS) $(CORE_SRCS) $(GTEST_LIBS)

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer.
$(BUILD)/unit_tests_sanitized: $(UNIT_SRCS) $(CORE_SRCS) $(wildcard src/core/*.hpp)
	@mkdir -p $(BUILD)
	$(CXX) $(CORE_CXXFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	    -fno-sanitize-recover=all -o $@ $(UNIT_SRCS) $(CORE_SRCS) $(GTEST_LIBS)

unit: $(BUILD)/unit_tests
	$(BUILD)/unit_tests

unit-sanitize: $(BUILD)/unit_tests_sanitized
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(BUILD)/unit_tests_sanitized

# Dependencies, build and install: what test, demo and bench start from.
installed: deps
	$(MAKE) all WERROR=-Werror
	$(MAKE) install

test: installed
	$(MAKE) $(BUILD)/unit_tests $(BUILD)/unit_tests_sanitized
	test/run_all.sh

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

bench: installed
	bench/run.sh

# Google Benchmark of the core (bench/core_bench.cpp).
$(BUILD)/core_bench: bench/core_bench.cpp $(CORE_SRCS) $(wildcard src/core/*.hpp)
	@mkdir -p $(BUILD)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -Isrc -o $@ bench/core_bench.cpp $(CORE_SRCS) -lbenchmark -pthread
