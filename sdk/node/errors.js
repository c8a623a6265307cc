// snowflake-ids: the error class every part of the package throws (the
// embedded generator, index.js, and the ID buffer, buffer.js), in a file of
// its own that loads no native code. docs/sdk.md#errors-1.
'use strict';

// Every error of this package: code is the SQLSTATE ('SF003', '22023', ...),
// as the extension's SQL functions raise them; reason names the condition
// ('NO_LEASE', 'CLOSED', ...: 55000 is both 'CLOSED' and 'FLEET', a fleet of
// another epoch or layout); hint says
// what to do, detail states the facts (either may be undefined).
class SnowflakeError extends Error {
    constructor(message) {
        super(message);
        this.name = 'SnowflakeError';
    }
}

// A SnowflakeError with its fields set.
function snowflakeError(code, reason, message, { hint, detail } = {}) {
    const e = new SnowflakeError(message);
    e.code = code;
    e.sqlstate = code;
    e.reason = reason;
    if (hint) e.hint = hint;
    if (detail) e.detail = detail;
    return e;
}

module.exports = { SnowflakeError, snowflakeError };
