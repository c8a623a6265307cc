#include "lease_driver.hpp"

#include "../core/reservation.hpp"
#include "../core/time.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace snowflake::etcd {

namespace {

using core::kNsPerMs;

Options with_abort_hook(Options o, bool (*hook)(void*), void* arg) noexcept {
    o.should_abort = hook;
    o.abort_arg = arg;
    return o;
}

}  // namespace

LeaseDriver::LeaseDriver(LeaseHost& host, const core::LeaseConfig& cfg, Options options,
                         std::string prefix, std::string identity) noexcept
    : host_(host), cfg_(cfg), prefix_(std::move(prefix)), identity_(std::move(identity)),
      client_(with_abort_hook(std::move(options), &LeaseDriver::should_abort, this)),
      lease_(core::lease::start(cfg, host.boot_ns())) {}

bool LeaseDriver::should_abort(void* self) noexcept {
    auto* d = static_cast<LeaseDriver*>(self);
    if (d->budget_deadline_ns_ == 0) return d->host_.stop_requested();
    return d->host_.boot_ns() >= d->budget_deadline_ns_;
}

int64_t LeaseDriver::turn() noexcept {
    int64_t now = host_.boot_ns();
    if (core::lease::tick(lease_, cfg_, now)) host_.publish(lease_);
    const core::LeaseStep step = core::lease::next_step(lease_, cfg_, now);
    switch (step.action) {
        case core::LeaseAction::Wait:
            break;
        case core::LeaseAction::Grant: {
            const int64_t sent = host_.boot_ns();
            const GrantResult r = client_.grant(cfg_.ttl_ms / 1000);
            if (r.status.ok())
                core::lease::on_grant_ok(lease_, cfg_, r.lease_id, r.ttl_s * 1000, sent, host_.boot_ns());
            else
                fail(core::LeaseAction::Grant, r.status);
            break;
        }
        case core::LeaseAction::ListWorkers: {
            const RangeResult r = client_.range(core::workers_prefix(prefix_));
            if (!r.status.ok()) {
                fail(core::LeaseAction::ListWorkers, r.status);
                break;
            }
            core::TakenIds taken;
            for (const KeyValue& kv : r.kvs) core::taken_add(taken, core::parse_worker_key(prefix_, kv.key));
            if (core::lease::choose_worker(lease_, cfg_, taken, host_.random()) < 0)
                core::lease::on_failure(lease_, cfg_, core::LeaseAction::ListWorkers,
                                       "every worker id from 0 to 1023 is held by another node",
                                       host_.boot_ns());
            break;
        }
        case core::LeaseAction::Claim: {
            const ClaimResult r =
                client_.claim(core::worker_key(prefix_, lease_.candidate), identity_, lease_.lease_id);
            if (!r.status.ok())
                fail(core::LeaseAction::Claim, r.status);  // LeaseNotFound: the lease is gone
            else if (r.claimed)
                core::lease::on_claim_ok(lease_, cfg_, host_.boot_ns());
            else
                core::lease::on_claim_taken(lease_, cfg_, r.holder.value, r.holder.lease, host_.boot_ns(),
                                           identity_);
            break;
        }
        case core::LeaseAction::ReadMark:
            read_mark();
            break;
        case core::LeaseAction::Revoke: {
            // This node's previous run holds the id (core::same_node): the
            // host's lock on its data proves that run dead.
            char text[200];
            snprintf(text, sizeof(text),
                     "snowflake revoking lease %lld of this node's previous run, which holds worker id %d",
                     static_cast<long long>(lease_.revoke_lease), lease_.candidate);
            host_.log(text, nullptr, nullptr);
            const Status st = client_.revoke(lease_.revoke_lease);
            if (st.ok() || st.code == Code::LeaseNotFound)
                core::lease::on_revoked(lease_, host_.boot_ns());
            else
                core::lease::on_failure(lease_, cfg_, core::LeaseAction::Revoke, st.error.c_str(),
                                       host_.boot_ns());
            break;
        }
        case core::LeaseAction::KeepAlive: {
            const int64_t sent = host_.boot_ns();
            const KeepaliveResult r = client_.keepalive(lease_.lease_id);
            if (r.status.ok() && r.ttl_s > 0)
                core::lease::on_keepalive_ok(lease_, cfg_, sent, host_.boot_ns());
            else if (r.status.ok() || r.status.code == Code::LeaseNotFound)
                core::lease::on_lease_gone(lease_, cfg_, host_.boot_ns());
            else
                fail(core::LeaseAction::KeepAlive, r.status);
            break;
        }
    }
    if (lease_.state == core::LeaseState::Held) renew_mark();
    host_.publish(lease_);

    now = host_.boot_ns();
    const core::LeaseStep next = core::lease::next_step(lease_, cfg_, now);
    if (next.action != core::LeaseAction::Wait) return 0;
    int64_t wait_ms = (next.at_ns - now + kNsPerMs - 1) / kNsPerMs;
    if (wait_ms > kTickMs) wait_ms = kTickMs;
    if (mark_failures_ > 0 && lease_.state == core::LeaseState::Held) {
        const int64_t retry_ms = (mark_retry_at_ns_ - now + kNsPerMs - 1) / kNsPerMs;
        if (retry_ms < wait_ms) wait_ms = retry_ms;
    }
    return wait_ms < 1 ? 1 : wait_ms;
}

bool LeaseDriver::shutdown() noexcept {
    const bool held = lease_.state == core::LeaseState::Held;
    core::lease::on_shutdown(lease_);
    host_.publish(lease_);
    if (!held && lease_.lease_id == 0) return true;
    // publish() fenced ids: none is issued past the fenced millisecond from
    // here on, whoever was in the middle of a call, so it is the exact mark.
    const int64_t exact = host_.fence_ids();

    budget_deadline_ns_ = host_.boot_ns() + kShutdownBudgetNs;
    const core::ShutdownPlan plan = core::plan_shutdown(lease_, host_.boot_ns());
    bool ok = true;
    if (plan.write_exact_mark && mark_worker_ == lease_.worker) {
        const core::Mark m = core::exact_shutdown_mark(exact);
        const CasResult r =
            client_.compare_and_put(core::mark_key(prefix_, lease_.worker), core::encode_etcd_mark(m),
                                    mark_revision_, core::worker_key(prefix_, lease_.worker), lease_.lease_id);
        if (!r.status.ok() || !r.succeeded) {
            ok = false;
            char text[200];
            snprintf(text, sizeof(text), "snowflake could not hand over the exact mark of worker id %d to etcd",
                     lease_.worker);
            host_.log(text, r.status.ok() ? "The mark or the worker key changed." : r.status.error.c_str(),
                      "The next holder of the id waits out the last reservation.");
        }
    }
    if (plan.revoke) {
        char text[200];
        snprintf(text, sizeof(text), "snowflake releasing worker id %d: revoking its lease in etcd", lease_.worker);
        host_.log(text, nullptr, nullptr);
        const Status s = client_.revoke(lease_.lease_id);
        if (!s.ok() && s.code != Code::LeaseNotFound) {
            ok = false;
            host_.log("snowflake could not revoke its lease in etcd", s.error.c_str(),
                      "The worker id is free when the lease's TTL runs out.");
        }
    }
    return ok;
}

void LeaseDriver::fail(core::LeaseAction what, const Status& s) noexcept {
    core::lease::on_failure(lease_, cfg_, what, s.error.c_str(), host_.boot_ns());
    if (s.code == Code::LeaseNotFound) core::lease::on_lease_gone(lease_, cfg_, host_.boot_ns());
}

// The claimed id's etcd mark, then the hand-over: the generator starts above
// it and above everything this node issued. Nothing is reserved in etcd
// yet: the first id asks for it (renew_mark(), from the host's demand).
void LeaseDriver::read_mark() noexcept {
    const GetResult r = client_.get(core::mark_key(prefix_, lease_.worker));
    if (!r.status.ok()) {
        fail(core::LeaseAction::ReadMark, r.status);
        return;
    }
    core::Mark mark;  // ms -1: no mark yet
    if (r.found && !core::decode_etcd_mark(r.kv.value, &mark)) {
        core::lease::on_failure(lease_, cfg_, core::LeaseAction::ReadMark,
                               "the worker id's mark in etcd is not a mark this version can read; "
                               "remove the key only if no node issues ids with this worker id",
                               host_.boot_ns());
        return;
    }
    const int64_t revision = r.found ? r.kv.mod_revision : 0;
    // Unchanged since our own last write of it: nobody else issued under it.
    const bool ours = r.found && lease_.worker == mark_worker_ && revision == mark_revision_;
    mark_revision_ = revision;
    mark_worker_ = lease_.worker;
    core::Mark local;
    local.ms = host_.last_ms();
    local.clean = true;  // this node's position: exact
    const core::Handover h = core::plan_handover(local, 0, mark, core::kEtcdMarkWindowMs, ours);
    host_.start_tenure(lease_.worker, h, ours);
    core::lease::on_mark_read(lease_, cfg_, host_.boot_ns());
}

// Keeps the worker id's reservation in etcd ahead of the clock. A failed
// write is retried after the lease's retry delay (doubling), counted in the
// lease's failures; until one succeeds the host's callers report it.
void LeaseDriver::renew_mark() noexcept {
    const int64_t now_ns = host_.boot_ns();
    if (mark_failures_ > 0 && now_ns < mark_retry_at_ns_) return;
    const core::ReservationPlan plan = core::plan_reservation(host_.id_ms(), host_.etcd_reserved_ms(),
                                                              host_.demand_ms(), core::kEtcdMarkWindowMs);
    if (!plan.write) return;
    core::Mark m;
    m.ms = plan.until_ms;
    const std::string key = core::mark_key(prefix_, lease_.worker);
    const CasResult r = client_.compare_and_put(key, core::encode_etcd_mark(m), mark_revision_,
                                                core::worker_key(prefix_, lease_.worker), lease_.lease_id);
    if (!r.status.ok()) {
        char text[core::kLeaseErrorSize];
        snprintf(text, sizeof(text), "writing %s: %s", key.c_str(), r.status.error.c_str());
        // The write may still be applied after its reply timed out: its
        // value is then what the next compare finds.
        if (unconfirmed_.size() < kMaxUnconfirmed) unconfirmed_.push_back(m.ms);
        mark_write_failed(text);
        return;
    }
    int64_t until = plan.until_ms;
    int64_t revision = r.revision;
    if (!r.succeeded) {
        // A write of ours whose reply was lost may have moved the revision:
        // with our claim of the key still in place (the guard held) and one
        // of our own values there, it is ours; adopt it.
        core::Mark found;
        const bool own_write = !r.guard_failed && r.found && core::decode_etcd_mark(r.current.value, &found) &&
                               !found.clean &&
                               std::find(unconfirmed_.begin(), unconfirmed_.end(), found.ms) != unconfirmed_.end();
        if (!own_write) {
            // Someone else wrote the mark, or our claim of the worker key is
            // gone: the id is not ours any more. The lease is dropped on
            // purpose, so revoke it: otherwise its key would keep the id
            // (from this very node) for a whole TTL.
            host_.record_mark_attempt("the worker id's mark or key in etcd changed: the id is held by another lease");
            const int64_t dropped = lease_.lease_id;
            core::lease::on_lease_gone(lease_, cfg_, host_.boot_ns());
            host_.publish(lease_);  // fences ids before the revoke frees the id
            revoke_dropped(dropped);
            unconfirmed_.clear();
            return;
        }
        until = found.ms;
        revision = r.current.mod_revision;
    }
    unconfirmed_.clear();
    mark_failures_ = 0;
    mark_revision_ = revision;
    host_.publish_etcd_reservation(until);
    host_.record_mark_attempt("");
}

void LeaseDriver::mark_write_failed(const char* text) noexcept {
    host_.record_mark_attempt(text);
    lease_.failures++;
    mark_failures_++;
    mark_retry_at_ns_ = host_.boot_ns() + core::lease::retry_delay_ns(mark_failures_, cfg_.ttl_ms);
}

void LeaseDriver::revoke_dropped(int64_t lease_id) noexcept {
    if (lease_id == 0) return;
    const Status s = client_.revoke(lease_id);
    if (!s.ok() && s.code != Code::LeaseNotFound) {
        char text[200];
        snprintf(text, sizeof(text), "snowflake could not revoke dropped lease %lld in etcd",
                 static_cast<long long>(lease_id));
        host_.log(text, s.error.c_str(), "The worker id it holds is free when the lease's TTL runs out.");
    }
}

}  // namespace snowflake::etcd
