// snowflake-inspect: reads arguments and stdin, writes what inspect.cpp
// decides. No decision is made here.

#include "inspect.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <unistd.h>

namespace si = snowflake::inspect;

namespace {

struct Run {
    si::Format format;
    int64_t epoch_unix_us;
    si::Preset preset;
    snowflake::core::TextFormat id_format;
    bool text_forms;
    snowflake::core::IdLayout layout;
    bool any_invalid = false;
};

void put(const std::string& s, FILE* f) {
    std::fwrite(s.data(), 1, s.size(), f);
    std::fputc('\n', f);
}

void decode_line(Run& run, std::string_view text, long line) {
    for (std::string_view token : si::split_tokens(text)) {
        si::Decoded d = si::decode_token(token, run.epoch_unix_us, run.id_format, run.layout);
        si::add_preset_fields(&d, run.preset);
        if (run.text_forms) si::add_text_forms(&d);
        if (d.kind == si::Kind::Invalid) {
            run.any_invalid = true;
            std::fflush(stdout);  // keep stdout and stderr in input order on a terminal
            put(si::error_message(d, line), stderr);
            if (run.format == si::Format::Json) put(si::format_json(d), stdout);
        } else {
            put(run.format == si::Format::Json ? si::format_json(d) : si::format_text(d), stdout);
        }
    }
}

// Decodes stdin line by line, flushing after each line, so that the command
// can sit at the end of a pipe that streams ids.
void decode_stdin(Run& run) {
    char* buf = nullptr;
    size_t cap = 0;
    long line = 0;
    ssize_t n;
    while ((n = getline(&buf, &cap, stdin)) >= 0) {
        line++;
        decode_line(run, std::string_view(buf, static_cast<size_t>(n)), line);
        std::fflush(stdout);
    }
    std::free(buf);
}

}  // namespace

int main(int argc, char** argv) {
    const si::Request r = si::parse_args(argc, argv);
    switch (r.action) {
        case si::Action::Help:
            std::fputs(si::usage_text().c_str(), stdout);
            return si::kExitOk;
        case si::Action::Version:
            std::fputs(si::version_text().c_str(), stdout);
            return si::kExitOk;
        case si::Action::Usage:
            std::fprintf(stderr, "snowflake-inspect: %s\nTry \"snowflake-inspect --help\".\n", r.error.c_str());
            return si::kExitUsage;
        case si::Action::Compose: {
            int64_t id = 0;
            std::string why;
            if (!si::compose_from_timestamp(r.compose_unix_us, r.epoch_unix_us, &id, &why, r.layout)) {
                std::fprintf(stderr, "snowflake-inspect: --from-timestamp %s: %s\n",
                             si::format_time(r.compose_unix_us).c_str(), why.c_str());
                return si::kExitInvalidInput;
            }
            std::printf("%s\n", si::format_composed(r.format, r.compose_unix_us, id).c_str());
            if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
                std::perror("snowflake-inspect: writing the output");
                return si::kExitOutput;
            }
            return si::kExitOk;
        }
        case si::Action::Decode:
            break;
    }
    if (r.read_stdin && isatty(STDIN_FILENO)) {
        std::fprintf(stderr,
                     "snowflake-inspect: no ids given\n"
                     "Give ids or UUIDs as arguments, pipe them in, or give - to type them.\n"
                     "Try \"snowflake-inspect --help\".\n");
        return si::kExitUsage;
    }

    Run run{r.format, r.epoch_unix_us, r.preset, r.id_format, r.text_forms, r.layout};
    if (r.read_stdin) {
        decode_stdin(run);
    } else {
        for (const std::string& input : r.inputs) {
            if (input == "-") {
                decode_stdin(run);
            } else if (si::split_tokens(input).empty()) {
                // An empty argument is an input too, and not an id.
                const si::Decoded d = si::decode_token(input, run.epoch_unix_us, run.id_format, run.layout);
                run.any_invalid = true;
                put(si::error_message(d, 0), stderr);
                if (run.format == si::Format::Json) put(si::format_json(d), stdout);
            } else {
                decode_line(run, input, 0);
            }
        }
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        std::perror("snowflake-inspect: writing the output");
        return si::kExitOutput;
    }
    return run.any_invalid ? si::kExitInvalidInput : si::kExitOk;
}
