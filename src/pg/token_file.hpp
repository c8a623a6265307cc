// token_file.cpp: the HTTP endpoint's Bearer tokens from its two settings,
// the file read with plain POSIX calls.
#pragma once

#include <cstddef>

#include "../core/http_api.hpp"

#include "pg_headers.hpp"

namespace snowflake::pg {

// The tokens of snowflake.http_token and snowflake.http_token_file, into
// *out (configured when either is set). Raises no error (the HTTP worker
// calls it at every reload, the postmaster at start): nullptr, or why the
// file was not used, a sentence, possibly written into why (cap bytes);
// then none of its tokens is in *out, which stays configured: nothing is
// accepted rather than anything.
const char* load_tokens(snowflake::core::http::Tokens* out, char* why, size_t cap);

}  // namespace snowflake::pg
