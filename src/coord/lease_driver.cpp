#include "lease_driver.hpp"

#include "../core/etcd_schema.hpp"
#include "../core/reservation.hpp"
#include "../core/time.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace snowflake::coord {

namespace {

using core::kNsPerMs;

}  // namespace

LeaseDriver::LeaseDriver(LeaseHost& host, const core::LeaseConfig& cfg,
                         std::unique_ptr<core::Coordinator> coordinator, std::string identity) noexcept
    : host_(host), cfg_(cfg), identity_(std::move(identity)), coordinator_(std::move(coordinator)),
      lease_(core::lease::start(cfg, host.boot_ns())) {
    coordinator_->set_abort_hook(&LeaseDriver::should_abort, this);
}

bool LeaseDriver::should_abort(void* self) noexcept {
    auto* d = static_cast<LeaseDriver*>(self);
    if (d->budget_deadline_ns_ == 0) return d->host_.stop_requested();
    return d->host_.boot_ns() >= d->budget_deadline_ns_;
}

int64_t LeaseDriver::turn() noexcept {
    coordinator_->poll();
    int64_t now = host_.boot_ns();
    if (core::lease::tick(lease_, cfg_, now)) host_.publish(lease_);
    const core::LeaseStep step = core::lease::next_step(lease_, cfg_, now);
    switch (step.action) {
        case core::LeaseAction::Wait:
            break;
        case core::LeaseAction::Grant: {
            const int64_t sent = host_.boot_ns();
            const core::CoordGrant r = coordinator_->grant(cfg_.ttl_ms);
            if (r.status.ok())
                core::lease::on_grant_ok(lease_, cfg_, r.lease_id, r.ttl_ms, sent, host_.boot_ns());
            else
                fail(core::LeaseAction::Grant, r.status);
            break;
        }
        case core::LeaseAction::ListWorkers: {
            const core::CoordWorkers r = coordinator_->list_workers();
            if (!r.status.ok()) {
                fail(core::LeaseAction::ListWorkers, r.status);
                break;
            }
            if (core::lease::choose_worker(lease_, cfg_, r.taken, host_.random()) < 0)
                core::lease::on_failure(lease_, cfg_, core::LeaseAction::ListWorkers,
                                       "every worker id from 0 to 1023 is held by another node",
                                       host_.boot_ns());
            break;
        }
        case core::LeaseAction::Claim: {
            const core::CoordClaim r = coordinator_->claim(lease_.candidate, identity_, lease_.lease_id);
            if (!r.status.ok())
                fail(core::LeaseAction::Claim, r.status);  // SessionGone: the lease is gone
            else if (r.claimed)
                core::lease::on_claim_ok(lease_, cfg_, host_.boot_ns());
            else
                core::lease::on_claim_taken(lease_, cfg_, r.holder_value, r.holder_lease, host_.boot_ns(),
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
                     "snowflake revoking lease %s of this node's previous run, which holds worker id %d",
                     coordinator_->lease_text(lease_.revoke_lease).c_str(), lease_.candidate);
            host_.log(text, nullptr, nullptr);
            const core::CoordStatus st = coordinator_->release_other(lease_.revoke_lease, lease_.candidate);
            if (st.ok())
                core::lease::on_revoked(lease_, host_.boot_ns());
            else
                core::lease::on_failure(lease_, cfg_, core::LeaseAction::Revoke, st.error.c_str(),
                                       host_.boot_ns());
            break;
        }
        case core::LeaseAction::KeepAlive: {
            const int64_t sent = host_.boot_ns();
            const core::CoordStatus r = coordinator_->keepalive(lease_.lease_id);
            if (r.ok())
                core::lease::on_keepalive_ok(lease_, cfg_, sent, host_.boot_ns());
            else if (r.code == core::CoordCode::SessionGone)
                lease_gone();
            else
                fail(core::LeaseAction::KeepAlive, r);
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
        const core::CoordMarkWrite r =
            coordinator_->write_mark(lease_.worker, core::encode_etcd_mark(m), mark_revision_, lease_.lease_id);
        if (!r.status.ok() || !r.succeeded) {
            ok = false;
            char text[200];
            snprintf(text, sizeof(text), "snowflake could not hand over the exact mark of worker id %d to %s",
                     lease_.worker, coordinator_->display_name());
            host_.log(text, r.status.ok() ? "The mark or the worker key changed." : r.status.error.c_str(),
                      "The next holder of the id waits out the last reservation.");
        }
    }
    if (plan.revoke) {
        char text[200];
        snprintf(text, sizeof(text), "snowflake releasing worker id %d: revoking its lease in %s", lease_.worker,
                 coordinator_->display_name());
        host_.log(text, nullptr, nullptr);
        const core::CoordStatus s = coordinator_->release(lease_.lease_id);
        if (!s.ok()) {
            ok = false;
            snprintf(text, sizeof(text), "snowflake could not end its lease in %s", coordinator_->display_name());
            host_.log(text, s.error.c_str(), "The worker id is free when the lease's TTL runs out.");
        }
    }
    return ok;
}

// The lease (ZooKeeper: session) is gone: lease::on_lease_gone, its
// sentence naming the lease and the coordinator as the coordinator does.
void LeaseDriver::lease_gone() noexcept {
    const std::string what = std::string(coordinator_->lease_noun()) + " " + coordinator_->lease_text(lease_.lease_id);
    core::lease::on_lease_gone(lease_, cfg_, host_.boot_ns(), lease_.lease_id != 0 ? what.c_str() : nullptr,
                               coordinator_->display_name());
}

void LeaseDriver::fail(core::LeaseAction what, const core::CoordStatus& s) noexcept {
    core::lease::on_failure(lease_, cfg_, what, s.error.c_str(), host_.boot_ns());
    if (s.code == core::CoordCode::SessionGone) lease_gone();
}

// The claimed id's etcd mark, then the hand-over: the generator starts above
// it and above everything this node issued. Nothing is reserved in etcd
// yet: the first id asks for it (renew_mark(), from the host's demand).
void LeaseDriver::read_mark() noexcept {
    const core::CoordMarkRead r = coordinator_->read_mark(lease_.worker);
    if (!r.status.ok()) {
        fail(core::LeaseAction::ReadMark, r.status);
        return;
    }
    core::Mark mark;  // ms -1: no mark yet
    if (r.found && !core::decode_etcd_mark(r.value, &mark)) {
        core::lease::on_failure(lease_, cfg_, core::LeaseAction::ReadMark,
                               "the worker id's mark in the coordinator is not a mark this version can read; "
                               "remove it only if no node issues ids with this worker id",
                               host_.boot_ns());
        return;
    }
    const int64_t revision = r.found ? r.revision : 0;
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
    const core::CoordMarkWrite r =
        coordinator_->write_mark(lease_.worker, core::encode_etcd_mark(m), mark_revision_, lease_.lease_id);
    if (!r.status.ok()) {
        char text[core::kLeaseErrorSize];
        snprintf(text, sizeof(text), "writing the mark of worker id %d: %s", lease_.worker, r.status.error.c_str());
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
        const bool own_write = !r.guard_failed && r.found && core::decode_etcd_mark(r.current_value, &found) &&
                               !found.clean &&
                               std::find(unconfirmed_.begin(), unconfirmed_.end(), found.ms) != unconfirmed_.end();
        if (!own_write) {
            // Someone else wrote the mark, or our claim of the worker key is
            // gone: the id is not ours any more. The lease is dropped on
            // purpose, so revoke it: otherwise its key would keep the id
            // (from this very node) for a whole TTL.
            host_.record_mark_attempt(
                "the worker id's mark or key in the coordinator changed: the id is held by another lease");
            const int64_t dropped = lease_.lease_id;
            lease_gone();
            host_.publish(lease_);  // fences ids before the revoke frees the id
            revoke_dropped(dropped);
            unconfirmed_.clear();
            return;
        }
        until = found.ms;
        revision = r.current_revision;
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
    const core::CoordStatus s = coordinator_->release(lease_id);
    if (!s.ok()) {
        char text[200];
        snprintf(text, sizeof(text), "snowflake could not end dropped lease %s in %s",
                 coordinator_->lease_text(lease_id).c_str(), coordinator_->display_name());
        host_.log(text, s.error.c_str(), "The worker id it holds is free when the lease's TTL runs out.");
    }
}

}  // namespace snowflake::coord
