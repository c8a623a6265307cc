# sdk/bindings.mk: the Node.js and Python bindings of libsnowflake_ids (issue 30),
# built in place from the checkout; included by the last line of the Makefile.
#
#   make sdk          the C library (its rules are the Makefile's), then both bindings
#   make sdk-node     sdk/node/build/snowflake_ids.node (Node-API, /usr/include/node)
#   make sdk-python   sdk/python/snowflake_ids/_native<EXT_SUFFIX> (CPython, SDK_PYTHON's headers)
#
# Each binding is one shared object with the C library's archive (built PIC)
# linked in statically; only the system libraries the library uses stay
# dynamic. npm install ./sdk/node (sdk/node/build.js) and pip install
# ./sdk/python (sdk/python/setup.py) run these same rules.

SDK_C_ARCHIVE ?= $(BUILD)/sdk/libsnowflake_ids.a
SDK_C_LIBS    ?= $(SDK_LIBS)
SDK_PYTHON    ?= /usr/bin/python3
SDK_NODE_INCLUDE ?= $(firstword $(wildcard /usr/include/node /usr/local/include/node))
SDK_BIND_CXXFLAGS := -std=c++17 -O2 -g -fPIC -Wall -Wextra $(WERROR) -fvisibility=hidden -Isdk/c/include

SDK_NODE_ADDON := sdk/node/build/snowflake_ids.node
SDK_PY_EXT     := sdk/python/snowflake_ids/_native$(shell $(SDK_PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
SDK_PY_INCLUDE := $(shell $(SDK_PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)

.PHONY: sdk sdk-node sdk-python sdk-c-archive sdk-bindings-clean
sdk: sdk-node sdk-python
sdk-node: $(SDK_NODE_ADDON)
sdk-python: $(SDK_PY_EXT)
sdk-c-archive: $(SDK_C_ARCHIVE)

# -Wl,--exclude-libs: the library's own symbols stay inside the binding.
$(SDK_NODE_ADDON): sdk/node/src/addon.cpp sdk/c/include/snowflake_ids.h $(SDK_C_ARCHIVE)
	@test -n '$(SDK_NODE_INCLUDE)' || { echo 'sdk-node: no Node.js headers (/usr/include/node): install nodejs (Debian: libnode-dev)' >&2; exit 1; }
	@mkdir -p $(@D)
	$(CXX) $(SDK_BIND_CXXFLAGS) -isystem $(SDK_NODE_INCLUDE) -shared -o $@ $< $(SDK_C_ARCHIVE) \
	    -Wl,--exclude-libs,ALL $(SDK_C_LIBS)

$(SDK_PY_EXT): sdk/python/src/native.cpp sdk/c/include/snowflake_ids.h $(SDK_C_ARCHIVE)
	@test -f '$(SDK_PY_INCLUDE)/Python.h' || { echo 'sdk-python: no Python.h for $(SDK_PYTHON): install python3-dev' >&2; exit 1; }
	$(CXX) $(SDK_BIND_CXXFLAGS) -Wno-missing-field-initializers -isystem $(SDK_PY_INCLUDE) -shared -o $@ $< \
	    $(SDK_C_ARCHIVE) -Wl,--exclude-libs,ALL $(SDK_C_LIBS)

clean: sdk-bindings-clean
sdk-bindings-clean:
	rm -rf sdk/node/build sdk/node/node_modules sdk/python/build sdk/python/*.egg-info
	rm -f sdk/python/snowflake_ids/_native*.so
