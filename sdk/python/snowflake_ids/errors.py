"""snowflake_ids.errors: the error classes of the package, the embedded
generator's (snowflake_ids.Generator) and the ID buffer's
(snowflake_ids.buffer.IdBuffer), in a module that loads no native code.
docs/sdk.md (## Python, Errors; The ID buffer)."""

__all__ = [
    "Error", "ClockBehindError", "ClockRangeError", "NoLeaseError", "ClockUnsyncError", "ConfigError",
    "NotReadyError", "ClosedError", "FleetMismatchError", "MarkFileError", "MarkLockedError", "NoMemoryError",
    "AuthError", "UnavailableError", "ProtocolError",
]


class Error(Exception):
    """Every error of snowflake_ids: sqlstate is the SQLSTATE the extension's
    SQL functions raise for the same condition ("SF003", "22023", ...);
    detail states the facts and hint says what to do (None when absent)."""

    def __init__(self, message, sqlstate=None, detail=None, hint=None):
        super().__init__(message)
        self.message = message
        self.sqlstate = sqlstate or getattr(type(self), "default_sqlstate", None)
        self.detail = detail or None
        self.hint = hint or None

    def __str__(self):
        text = self.message
        if self.hint:
            text += " (hint: " + self.hint + ")"
        return text


class ClockBehindError(Error):
    """SF001: the clock stepped back past the tolerance."""
    default_sqlstate = "SF001"


class ClockRangeError(Error):
    """SF002: the clock is outside the range of the layout's time field from
    the epoch."""
    default_sqlstate = "SF002"


class NoLeaseError(Error):
    """SF003: no worker id is held now (also a fork child's first call)."""
    default_sqlstate = "SF003"


class ClockUnsyncError(Error):
    """SF004: reserved; not raised by this version."""
    default_sqlstate = "SF004"


class ConfigError(Error, ValueError):
    """22023: a setting or an argument is invalid."""
    default_sqlstate = "22023"


class NotReadyError(Error, TimeoutError):
    """57014: the timeout passed before a worker id was held."""
    default_sqlstate = "57014"


class ClosedError(Error):
    """55000: the generator is closed."""
    default_sqlstate = "55000"


class FleetMismatchError(Error):
    """55000: the fleet under the lease prefix has another epoch or layout
    (detail names both)."""
    default_sqlstate = "55000"


class MarkFileError(Error, OSError):
    """58030: the mark file could not be read, written or synced."""
    default_sqlstate = "58030"


class MarkLockedError(Error):
    """55006: another process (or generator) holds the mark file."""
    default_sqlstate = "55006"


class NoMemoryError(Error, MemoryError):
    """53200: out of memory."""
    default_sqlstate = "53200"


class AuthError(Error, PermissionError):
    """28000: a node refused the ID buffer's token (401 or 403)."""
    default_sqlstate = "28000"


class UnavailableError(Error, ConnectionError):
    """08006: the ID buffer got no good batch in time: the last request
    failed (connect error, timeout, 5xx, a bad answer) or every node is left
    out."""
    default_sqlstate = "08006"


class ProtocolError(UnavailableError):
    """08P01: a node answered 200 with something that is not a batch of
    strictly increasing int64 ids; no id of it was handed out."""
    default_sqlstate = "08P01"


# Named as the package's own (snowflake_ids.ConfigError, ...), as before the
# classes moved into this module.
for _cls in [globals()[_n] for _n in __all__]:
    _cls.__module__ = "snowflake_ids"
del _cls
