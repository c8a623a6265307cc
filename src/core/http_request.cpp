// The order of a request's checks and their refusals; see http_request.hpp.
#include "http_request.hpp"

#include <cstdio>
#include <cstring>

namespace snowflake::core::http {
namespace {

// A refusal with a fixed message.
void refuse(Decision* d, Check check, unsigned status, const char* code, const char* message,
            const char* hint) noexcept {
    d->failed = check;
    d->refusal.status = status;
    d->refusal.code = code;
    std::snprintf(d->refusal.message, sizeof(d->refusal.message), "%s", message);
    d->refusal.hint = hint;
}

bool takes_count(Endpoint e) noexcept { return e == Endpoint::IdsBatch || e == Endpoint::UuidsBatch; }

// The hint of a refused query: the parameters the path takes.
const char* query_hint(Endpoint e) noexcept {
    switch (e) {
        case Endpoint::IdsBatch: return "This path takes two parameters, count and format, each at most once.";
        case Endpoint::UuidsBatch: return "This path takes one parameter, count, at most once.";
        case Endpoint::IdDecode: return "This path takes one parameter, format, at most once.";
        default: return "This path takes no query parameters.";
    }
}

}  // namespace

Decision check_request(const Request& rq, const Access& a) noexcept {
    Decision d;
    const Endpoint e = rq.route.endpoint;
    const bool configured = a.tokens->configured;
    if (e != Endpoint::Livez && !exposure_allowed(a.kind, configured, a.allow_unauthenticated)) {
        // The token was removed at a reload: the server would not start so.
        refuse(&d, Check::Exposure, 403, "28000", "no token is set for a non-loopback address",
               "Set snowflake.http_token or snowflake.http_token_file, or "
               "snowflake.http_allow_unauthenticated = on, and reload.");
        return d;
    }
    if (!configured && !host_allowed(rq.host, *a.listen, a.kind)) {
        refuse(&d, Check::Host, 403, "28000", "",
               "Without snowflake.http_token, requests must name the listen address or "
               "localhost in Host (a defence against DNS rebinding); set a token to serve "
               "other names.");
        std::snprintf(d.refusal.message, sizeof(d.refusal.message),
                      "host \"%.100s\" is not the address of this endpoint", rq.host != nullptr ? rq.host : "");
        return d;
    }
    const bool is_authorized = authorized(*a.tokens, rq.authorization);
    if (needs_token(e) && !is_authorized) {
        refuse(&d, Check::Token, 401, "28000", "missing or wrong bearer token",
               "Send the header \"Authorization: Bearer\" with a token of snowflake.http_token "
               "or snowflake.http_token_file.");
        d.refusal.www_authenticate = true;
        return d;
    }
    if (e == Endpoint::NotFound) {
        refuse(&d, Check::Route, 404, "42704", "no such path",
               "Paths: /v1/ids/batch?count=N&format=F, /v1/ids/{id}?format=F, /v1/uuids/batch?count=N, "
               "/livez, /readyz (or /healthz), /metrics; F is decimal (the default), base32 or base62.");
        return d;
    }
    if (!rq.route.method_allowed) {
        refuse(&d, Check::Method, 405, "0A000", "method not allowed",
               "Use GET (or HEAD where it changes nothing).");
        d.refusal.allow = allowed_methods(e);
        return d;
    }
    const QueryVerdict q = check_query(e, rq.query_names, rq.query_name_count);
    if (q.kind != QueryVerdict::Kind::Ok) {
        refuse(&d, Check::Query, 400, "22023", "", query_hint(e));
        std::snprintf(d.refusal.message, sizeof(d.refusal.message),
                      q.kind == QueryVerdict::Kind::Repeated ? "query parameter \"%.64s\" is given more than once"
                                                             : "unknown query parameter \"%.64s\"",
                      q.name);
        return d;
    }
    if (takes_count(e) && !parse_count(rq.count_occurrences, rq.count, &d.count)) {
        refuse(&d, Check::Count, 400, "22023", kCountMessage.text,
               "Give count once, as decimal digits; without it, one value is returned.");
        return d;
    }
    if (takes_format(e) && !parse_format(rq.format_occurrences, rq.format, &d.format)) {
        refuse(&d, Check::Format, 400, "22023", kFormatMessage, kFormatHint);
        return d;
    }
    d.full_reason = configured && is_authorized;
    return d;
}

}  // namespace snowflake::core::http
