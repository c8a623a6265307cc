"""snowflake_ids: snowflake ids for Python.

The embedded generator: the same 64-bit ids (41-bit millisecond timestamp,
10-bit worker id, 12-bit sequence, or the nodes' snowflake.layout: layout=
"js-safe" keeps every id below 2**53), the same registry (etcd or ZooKeeper) and
the same guarantees as a PostgreSQL node running the snowflake extension, from
libsnowflake_ids (sdk/c/include/snowflake_ids.h) through the C extension
snowflake_ids._native.

    import snowflake_ids
    with snowflake_ids.Generator(etcd_endpoints="http://127.0.0.1:2379") as gen:
        gen.next_id()

The ID buffer (snowflake_ids.buffer.IdBuffer, also snowflake_ids.IdBuffer):
ids taken in batches from the nodes' HTTP endpoint, for processes that hold
no worker id; standard library only. The native extension is imported only
when Generator, decode, Decoded or version is first used, so that the buffer
and the error classes import where it was never built.

docs/sdk.md (## Python; The ID buffer) describes the API, the errors, fork and exit.
"""

from .errors import *  # noqa: F401,F403 (the error classes)
from .errors import __all__ as _errors_all
from .buffer import IdBuffer

__all__ = ["Generator", "Decoded", "decode", "DEFAULT_EPOCH", "IdBuffer"] + _errors_all

DEFAULT_EPOCH = "2025-01-01 00:00:00+00"

_NATIVE = ("Generator", "Decoded", "decode", "version", "_native")


def __getattr__(name):
    # The embedded generator's names, from snowflake_ids._generator (and so
    # the native extension) on first use.
    if name in _NATIVE:
        from . import _generator
        for n in _NATIVE:
            globals()[n] = getattr(_generator, n)
        return globals()[name]
    raise AttributeError("module 'snowflake_ids' has no attribute %r" % name)


def __dir__():
    return sorted(set(globals()) | set(_NATIVE))
