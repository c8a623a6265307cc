"""snowflake_ids._generator: the embedded generator, over the C extension
snowflake_ids._native (imported by snowflake_ids when Generator, decode,
Decoded or version is first used, so that the ID buffer needs no native
code). docs/sdk.md (## Python)."""

import atexit
import datetime as _dt
import weakref as _weakref

from . import _native
from .errors import (ClockBehindError, ClockRangeError, ClockUnsyncError, ClosedError, ConfigError, Error,
                     FleetMismatchError, MarkFileError, MarkLockedError, NoLeaseError, NoMemoryError,
                     NotReadyError)

version = _native.version
DEFAULT_EPOCH = "2025-01-01 00:00:00+00"


# The library's sf_code -> class (55000 is two codes: closed and fleet).
_native._set_errors({
    1: ClockBehindError, 2: ClockRangeError, 3: NoLeaseError, 4: ClockUnsyncError, 5: ConfigError,
    6: NotReadyError, 7: ClosedError, 8: FleetMismatchError, 9: MarkFileError, 10: MarkLockedError,
    11: NoMemoryError,
})


def _join(name, value):
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    raise ConfigError(name + " must be a str or a list of str", "22023")


def _epoch_text(value):
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise ConfigError("an epoch datetime must be aware (have a tzinfo)", "22023")
        return value.astimezone(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f+00:00")
    if isinstance(value, str):
        return value
    raise ConfigError("epoch must be a str (ISO 8601 with an offset) or an aware datetime", "22023")


def _ms(name, seconds):
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
        raise ConfigError(name + " must be a number of seconds", "22023")
    return int(round(seconds * 1000))


def _range(value):
    if value is None:
        return None, None
    if isinstance(value, str):
        parts = value.split("-")
        if len(parts) == 2 and all(p.strip().isdigit() for p in parts):
            return int(parts[0]), int(parts[1])
    elif isinstance(value, range) and value.step == 1 and len(value) > 0:
        return value.start, value.stop - 1
    elif isinstance(value, (tuple, list)) and len(value) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return value[0], value[1]
    raise ConfigError("worker_ids must be a range of worker ids: '512-1023', (512, 1023) or range(512, 1024)",
                      "22023")


def _layout(value):
    if value is None or isinstance(value, str):
        return value
    raise ConfigError("layout must be a str: 'twitter', 'js-safe' or 'time T, worker W, sequence S'", "22023")


_open = _weakref.WeakSet()

_CLOCK_BACKWARDS = {None: None, "refuse": 0, "failover": 1}


class Generator(_native.Generator):
    """A generator of ids. Returns once a worker id is held (leased from etcd
    or ZooKeeper, or the static worker_id with its mark_file locked), or
    raises NotReadyError after `timeout` seconds (30).

    lease_ttl and timeout are seconds; worker_ids is the range a leased id is
    chosen from (default: the upper half of the layout's worker ids, 512-1023
    for twitter, 32-63 for js-safe); clock_backwards is "refuse" or
    "failover". layout is the bit layout of the ids, as the nodes'
    snowflake.layout: "twitter" (the default), "js-safe" (every id below
    2**53, so that it survives a JavaScript Number or a float exactly) or
    "time T, worker W, sequence S"; a bad one, a worker id beyond it or a mark
    file of another layout raise ConfigError (22023), a fleet of another
    layout FleetMismatchError (55000).
    """

    def __init__(self, *, etcd_endpoints=None, zookeeper_hosts=None, worker_id=None, worker_ids=None,
                 lease_prefix=None, lease_ttl=None, epoch=None, layout=None, clock_tolerance_ms=None,
                 clock_backwards=None, mark_file=None, timeout=30):
        if clock_backwards not in _CLOCK_BACKWARDS:
            raise ConfigError("clock_backwards must be 'refuse' or 'failover'", "22023")
        lo, hi = _range(worker_ids)
        if mark_file is not None and not isinstance(mark_file, str):
            mark_file = __import__("os").fspath(mark_file)
        super().__init__(
            etcd_endpoints=_join("etcd_endpoints", etcd_endpoints),
            zookeeper_hosts=_join("zookeeper_hosts", zookeeper_hosts),
            worker_id=worker_id, worker_id_min=lo, worker_id_max=hi,
            lease_ttl_ms=_ms("lease_ttl", lease_ttl), lease_prefix=lease_prefix, epoch=_epoch_text(epoch),
            layout=_layout(layout),
            clock_tolerance_ms=clock_tolerance_ms, clock_backwards=_CLOCK_BACKWARDS[clock_backwards],
            mark_file=mark_file, timeout_ms=_ms("timeout", timeout))
        _open.add(self)

    def wait_ready(self, timeout=30):
        """Waits until a worker id is held: after a fork, the child's first
        call fails with NoLeaseError and starts a lease of its own."""
        super().wait_ready(_ms("timeout", timeout))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return "<snowflake_ids.Generator closed>" if self.closed else "<snowflake_ids.Generator>"


@atexit.register
def _close_all():
    # At exit, end every open generator's lease and write its mark, so that
    # the next holder need not wait for a TTL.
    for gen in list(_open):
        try:
            gen.close()
        except Error:
            pass


Generator.__module__ = "snowflake_ids"


class Decoded(tuple):
    """decode()'s result: timestamp (an aware UTC datetime), ms_since_epoch,
    worker_id, sequence."""
    __slots__ = ()
    _fields = ("timestamp", "ms_since_epoch", "worker_id", "sequence")

    def __new__(cls, timestamp, ms_since_epoch, worker_id, sequence):
        return tuple.__new__(cls, (timestamp, ms_since_epoch, worker_id, sequence))

    timestamp = property(lambda self: self[0])
    ms_since_epoch = property(lambda self: self[1])
    worker_id = property(lambda self: self[2])
    sequence = property(lambda self: self[3])

    def __repr__(self):
        return "Decoded(timestamp=%r, ms_since_epoch=%r, worker_id=%r, sequence=%r)" % tuple(self)


Decoded.__module__ = "snowflake_ids"

_UNIX = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_default_epoch_ms = None


def _epoch_ms(epoch):
    global _default_epoch_ms
    if epoch is None:
        if _default_epoch_ms is None:
            _default_epoch_ms = _native._parse_epoch(DEFAULT_EPOCH)
        return _default_epoch_ms
    if isinstance(epoch, int) and not isinstance(epoch, bool):
        return epoch
    return _native._parse_epoch(_epoch_text(epoch))


def decode(id, epoch=None, layout=None):
    """The fields of an id under an epoch (the default epoch when None; text
    as the generator's epoch, an aware datetime, or Unix milliseconds) and a
    layout (as the generator's; twitter when None). ConfigError (22023) for an
    id the layout cannot hold (2**53 and up under js-safe)."""
    if isinstance(id, bool) or not isinstance(id, int):
        raise ConfigError("an id is an int", "22023")
    if id < 0 or id >= 1 << 63:
        raise ConfigError("an id is from 0 to 2**63-1", "22023")
    unix_ms, ms_since_epoch, worker_id, sequence = _native._decode(id, _epoch_ms(epoch), _layout(layout))
    return Decoded(_UNIX + _dt.timedelta(milliseconds=unix_ms), ms_since_epoch, worker_id, sequence)
