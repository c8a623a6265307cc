// The HTTP endpoint's Bearer tokens: snowflake.http_token as it is, and
// snowflake.http_token_file opened, checked and read with plain POSIX calls
// (what is wrong with a file is the core's: core::http::token_file_problem).
// The file is opened O_NONBLOCK, so that a FIFO put there cannot hold up
// the start (it is then refused as not a regular file), and the text read
// is wiped once its tokens are copied.

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/http_api.hpp"
#include "token_file.hpp"
#include "guc.hpp"

namespace http = snowflake::core::http;

namespace snowflake::pg {

// The tokens of both settings (token_file.hpp).
const char* load_tokens(http::Tokens* out, char* why, size_t cap) {
    *out = http::Tokens{};
    const bool has_file = http_token_file != nullptr && http_token_file[0] != '\0';
    out->configured = has_file || (http_token != nullptr && http_token[0] != '\0');
    // The setting's check hook accepted it.
    if (http::add_tokens(out, http_token) != nullptr) return "snowflake.http_token is invalid.";
    if (!has_file) return nullptr;
    const int fd = open(http_token_file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        snprintf(why, cap, "could not open it: %s.", strerror(errno));
        return why;
    }
    struct stat st;
    char text[http::kMaxTokenFileBytes + 1];
    ssize_t n = 0;
    const char* problem = nullptr;
    if (fstat(fd, &st) != 0) {
        snprintf(why, cap, "could not stat it: %s.", strerror(errno));
        problem = why;
    } else {
        problem = http::token_file_problem(S_ISREG(st.st_mode), st.st_uid == geteuid() || st.st_uid == 0,
                                           (st.st_mode & (S_IRWXG | S_IRWXO)) != 0);
    }
    if (problem == nullptr) {
        if ((n = read(fd, text, sizeof(text) - 1)) < 0) {
            snprintf(why, cap, "could not read it: %s.", strerror(errno));
            problem = why;
        } else if (n == static_cast<ssize_t>(sizeof(text) - 1)) {
            problem = "It is longer than 4 kB.";
        }
    }
    close(fd);
    if (problem != nullptr) return problem;
    text[n] = '\0';
    http::Tokens from_file = *out;
    if (const char* bad = http::add_tokens(&from_file, text)) {
        snprintf(why, cap, "%s", bad);
        return why;
    }
    *out = from_file;
    memset(text, 0, sizeof(text));
    return nullptr;
}

}  // namespace snowflake::pg
