// http_worker.cpp: the HTTP endpoint (snowflake.http_listen).
#pragma once

namespace snowflake::pg {

// _PG_init, when snowflake.http_listen is not empty: checks the token and
// address settings (FATAL when unsafe) and registers the HTTP worker.
void register_http_worker();

}  // namespace snowflake::pg
