#include "lease_driver.hpp"

#include "../core/backup.hpp"
#include "../core/coord_schema.hpp"
#include "../core/id_layout.hpp"
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
                         std::unique_ptr<core::Coordinator> coordinator, core::NodeIdentity me,
                         core::FleetSettings fleet) noexcept
    : host_(host), cfg_(cfg), me_(std::move(me)), identity_(core::encode_node_identity(me_)), fleet_(fleet),
      coordinator_(std::move(coordinator)), lease_(core::lease::start(cfg, host.boot_ns())) {
    cfg_.relayed_renewals = coordinator_->renewals_relayed();
    coordinator_->set_abort_hook(&LeaseDriver::should_abort, this);
}

bool LeaseDriver::should_abort(void* self) noexcept {
    auto* d = static_cast<LeaseDriver*>(self);
    if (d->budget_deadline_ns_ == 0) return d->host_.stop_requested();
    return d->host_.boot_ns() >= d->budget_deadline_ns_;
}

int64_t LeaseDriver::turn() noexcept {
    coordinator_->poll();
    // A backup goes with the lease that holds it (a new grant, a lease gone),
    // and so does a key left to give back.
    if (backup_worker_ >= 0 && lease_.lease_id != backup_lease_) drop_backup();
    if (stray_backup_ >= 0 && lease_.lease_id != stray_lease_) stray_backup_ = -1;
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
        case core::LeaseAction::CheckFleet:
            check_fleet();
            break;
        case core::LeaseAction::ListWorkers: {
            const core::CoordWorkers r = coordinator_->list_workers();
            if (!r.status.ok()) {
                fail(core::LeaseAction::ListWorkers, r.status);
                break;
            }
            if (core::lease::choose_worker(lease_, cfg_, r.taken, host_.random()) < 0) {
                char why[core::kLeaseErrorSize];
                snprintf(why, sizeof(why), "every worker id from %d to %d is held by another node",
                         static_cast<int>(cfg_.worker_min), static_cast<int>(cfg_.worker_max));
                core::lease::on_failure(lease_, cfg_, core::LeaseAction::ListWorkers, why, host_.boot_ns());
            }
            break;
        }
        case core::LeaseAction::Claim: {
            const core::CoordClaim r = coordinator_->claim(lease_.candidate, claim_value(), lease_.lease_id);
            if (!r.status.ok()) {
                fail(core::LeaseAction::Claim, r.status);  // SessionGone: the lease is gone
            } else if (r.claimed) {
                core::lease::on_claim_ok(lease_, cfg_, host_.boot_ns());
            } else {
                core::lease::on_claim_taken(lease_, cfg_, r.holder_value, r.holder_lease, host_.boot_ns(),
                                           identity_);
                log_refusal();
            }
            break;
        }
        case core::LeaseAction::ReadMark:
            read_mark();
            break;
        case core::LeaseAction::Revoke: {
            // An earlier lease of this very instance holds the id
            // (core::HolderKind::ThisRun): ours to end.
            char text[200];
            snprintf(text, sizeof(text),
                     "snowflake revoking lease %s, an earlier lease of this run, which holds worker id %d",
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
    if (lease_.state == core::LeaseState::Held) clock_failover();
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
    if (plan.write_exact_mark && backup_worker_ >= 0 && mark_worker_ == backup_worker_) {
        // On a backup: the fenced millisecond is the backup's; the own id's
        // last one was kept when the backup started.
        ok = write_exact_mark(backup_worker_, exact, mark_revision_) && ok;
        if (own_mark_revision_ != 0) ok = write_exact_mark(lease_.worker, own_last_ms_, own_mark_revision_) && ok;
    } else if (plan.write_exact_mark && mark_worker_ == lease_.worker) {
        ok = write_exact_mark(lease_.worker, exact, mark_revision_) && ok;
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
    drop_backup();
}

std::string LeaseDriver::claim_value() const noexcept {
    core::NodeIdentity n = me_;
    n.lease_ttl_ms = lease_.granted_ttl_ms;
    return core::encode_node_identity(n);
}

// Compares this node's settings with the fleet's, recording ours first if
// the fleet has none yet.
void LeaseDriver::check_fleet() noexcept {
    const core::CoordFleet r = coordinator_->ensure_fleet(core::encode_fleet_settings(fleet_));
    if (!r.status.ok()) {
        fail(core::LeaseAction::CheckFleet, r.status);
        return;
    }
    std::string sentence;
    const core::FleetCheck c = core::check_fleet_settings(r.value, fleet_, r.key, &sentence);
    if (r.created) {
        char text[400];
        snprintf(text, sizeof(text), "snowflake recorded the fleet's settings in %s at %s: epoch %s, layout %s",
                 coordinator_->display_name(), r.key.c_str(), core::utc_text(fleet_.epoch_unix_us).c_str(),
                 core::geometry_text(fleet_.layout).c_str());
        host_.log(text, nullptr, nullptr);
    }
    core::lease::on_fleet_checked(lease_, cfg_, c, sentence.c_str(), host_.boot_ns());
    log_refusal();
}

void LeaseDriver::log_refusal() noexcept {
    const core::LeaseError reason = lease_.last_error_reason;
    const bool worth_a_line = reason == core::LeaseError::FleetSettings || reason == core::LeaseError::Clone ||
                              (reason == core::LeaseError::PreviousRun && lease_.revoke_lease == 0);
    if (!worth_a_line || logged_error_ == lease_.last_error) return;
    logged_error_ = lease_.last_error;
    const char* what = reason == core::LeaseError::PreviousRun ? "snowflake waits for its worker id: "
                                                                : "snowflake leases no worker id: ";
    const std::string text = what + std::string(lease_.last_error);
    host_.log(text.c_str(), nullptr, core::lease::error_hint(reason));
}

void LeaseDriver::fail(core::LeaseAction what, const core::CoordStatus& s) noexcept {
    core::lease::on_failure(lease_, cfg_, what, s.error.c_str(), host_.boot_ns());
    if (s.code == core::CoordCode::SessionGone) lease_gone();
}

// The claimed id's mark in the coordinator, then the hand-over: the generator
// starts above it and above everything this node issued. Nothing is
// reserved in the coordinator yet: the first id asks for it (renew_mark(), from the host's demand).
void LeaseDriver::read_mark() noexcept {
    if (backup_worker_ >= 0) drop_backup();
    const core::CoordMarkRead r = coordinator_->read_mark(lease_.worker);
    if (!r.status.ok()) {
        fail(core::LeaseAction::ReadMark, r.status);
        return;
    }
    core::Mark mark;  // ms -1: no mark yet
    if (r.found && !core::decode_coord_mark(r.value, &mark)) {
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
    // This node's position: exact, unless it is still a reservation of the
    // previous run (a crash), whose grace the new tenure keeps.
    const core::Mark local = host_.local_mark();
    const core::Handover h = core::plan_handover(local, local.clean ? 0 : local.window_ms, mark,
                                                 core::kCoordMarkWindowMs, ours);
    host_.start_tenure(lease_.worker, h, ours);
    core::lease::on_mark_read(lease_, cfg_, host_.boot_ns());
}

// Keeps the worker id's reservation in the coordinator ahead of the clock. A failed
// write is retried after the lease's retry delay (doubling), counted in the
// lease's failures; until one succeeds the host's callers report it.
void LeaseDriver::renew_mark() noexcept {
    const int64_t now_ns = host_.boot_ns();
    if (mark_failures_ > 0 && now_ns < mark_retry_at_ns_) return;
    const core::ReservationPlan plan = core::plan_reservation(host_.id_ms(), host_.coord_reserved_ms(),
                                                              host_.demand_ms(), core::kCoordMarkWindowMs);
    if (!plan.write) return;
    core::Mark m;
    m.ms = plan.until_ms;
    const core::CoordMarkWrite r = coordinator_->write_mark(mark_worker_, core::encode_coord_mark(m),
                                                            mark_revision_, lease_.lease_id);
    if (!r.status.ok()) {
        char text[core::kLeaseErrorSize];
        snprintf(text, sizeof(text), "writing the mark of worker id %d: %s", mark_worker_, r.status.error.c_str());
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
        // written with our claim of the worker key (what only this node
        // could have written) and holding one of our own values, it is ours;
        // adopt it.
        core::Mark found;
        const bool own_write = !r.guard_failed && r.found &&
                               core::adopt_lost_write(r.current_ours, r.current_value, unconfirmed_.data(),
                                                      unconfirmed_.size(), &found);
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
    host_.publish_coord_reservation(until);
    host_.record_mark_attempt("");
}

void LeaseDriver::mark_write_failed(const char* text) noexcept {
    host_.record_mark_attempt(text);
    lease_.failures++;
    mark_failures_++;
    mark_retry_at_ns_ = host_.boot_ns() + core::lease::retry_delay_ns(mark_failures_, cfg_.ttl_ms);
}

// Hands the exact mark of `worker` over (a clean stop, a backup given
// back): the next holder starts right after exact_ms. Logged if it fails:
// the next holder then waits out the last reservation instead.
bool LeaseDriver::write_exact_mark(int32_t worker, int64_t exact_ms, int64_t revision) noexcept {
    const core::Mark m = core::exact_shutdown_mark(exact_ms);
    const core::CoordMarkWrite r = coordinator_->write_mark(worker, core::encode_coord_mark(m), revision,
                                                            lease_.lease_id);
    if (r.status.ok() && r.succeeded) return true;
    char text[200];
    snprintf(text, sizeof(text), "snowflake could not hand over the exact mark of worker id %d to %s", worker,
             coordinator_->display_name());
    host_.log(text, r.status.ok() ? "The mark or the worker key changed." : r.status.error.c_str(),
              "The next holder of the id waits out the last reservation.");
    return false;
}

// Clock failover, each turn while the id is held: a key given back earlier
// retried, then core::plan_backup on the driver's own reading of the
// generator and the clock (taken only while a caller asks or a backup is in
// use).
void LeaseDriver::clock_failover() noexcept {
    // With the lease that claimed it: the coordinator deletes the key only
    // while that lease holds it (etcd compares the key's lease, ZooKeeper
    // answers for the current session alone), so a later lease's claim of
    // the same id is never touched; turn() forgets the key when its lease
    // is gone.
    if (stray_backup_ >= 0 && coordinator_->unclaim(stray_backup_, stray_lease_).ok()) stray_backup_ = -1;
    const int64_t tolerance = host_.backup_wanted();
    if (tolerance < 0 && backup_worker_ < 0) return;
    core::ClockReading r;
    host_.read_generator(&r.generator, &r.now_ms);
    r.tolerance_ms = tolerance < 0 ? 0 : tolerance;
    core::BackupState b;
    b.worker = backup_worker_;
    b.since_ns = backup_since_ns_;
    b.own_last_ms = own_last_ms_;
    b.retry_at_ns = backup_retry_at_ns_;
    switch (core::plan_backup(b, tolerance >= 0, r, host_.boot_ns())) {
        case core::BackupStep::Stay:
            break;
        case core::BackupStep::NotNeeded:
            host_.record_backup_attempt("");  // the callers decide again
            break;
        case core::BackupStep::Take:
            // One key left to give back at a time: a new backup waits
            // until the last one's key is deleted (or its lease gone).
            if (stray_backup_ < 0) {
                take_backup(r, -1);
            } else {
                char why[core::kLeaseErrorSize];
                snprintf(why, sizeof(why),
                         "the key of backup worker id %d, given back, could not be deleted yet (retried each turn)",
                         stray_backup_);
                host_.record_backup_attempt(why);
                backup_retry_at_ns_ = host_.boot_ns() + core::lease::retry_delay_ns(1, cfg_.ttl_ms);
            }
            break;
        case core::BackupStep::Return:
            end_backup(false);
            break;
        case core::BackupStep::Switch: {
            const int32_t old = backup_worker_;
            end_backup(true);
            // A key not given back yet: retried first, at the next turn.
            if (stray_backup_ < 0) take_backup(r, old);
            break;
        }
    }
}

// Claims a free id in our lease whose mark is below the clock and has the
// host issue ids under it. An id whose mark is ahead, or that cannot be
// read, is given back at once.
// avoid: a backup just given back (its exact mark is ahead of the clock).
void LeaseDriver::take_backup(const core::ClockReading& reading, int32_t avoid) noexcept {
    char why[core::kLeaseErrorSize];
    const core::CoordWorkers w = coordinator_->list_workers();
    if (!w.status.ok()) {
        snprintf(why, sizeof(why), "listing the worker ids failed: %s", w.status.error.c_str());
        host_.record_backup_attempt(why);
        backup_retry_at_ns_ = host_.boot_ns() + core::lease::retry_delay_ns(1, cfg_.ttl_ms);
        if (w.status.code == core::CoordCode::SessionGone) lease_gone();
        return;
    }
    snprintf(why, sizeof(why), "every worker id from %d to %d is held", static_cast<int>(cfg_.worker_min),
             static_cast<int>(cfg_.worker_max));
    core::TakenIds tried;
    if (avoid >= 0) core::taken_add(tried, avoid);
    for (int32_t i = 0; i < core::kMaxBackupTries; i++) {
        const int32_t candidate = core::choose_backup(w.taken, lease_.worker, tried, cfg_.worker_min,
                                                      cfg_.worker_max);
        if (candidate < 0) break;
        core::taken_add(tried, candidate);
        const core::CoordClaim c = coordinator_->claim(candidate, claim_value(), lease_.lease_id);
        if (!c.status.ok()) {
            snprintf(why, sizeof(why), "claiming worker id %d failed: %s", candidate, c.status.error.c_str());
            if (c.status.code == core::CoordCode::SessionGone) {
                host_.record_backup_attempt(why);
                lease_gone();
                return;
            }
            break;
        }
        if (!c.claimed && c.holder_lease != lease_.lease_id) {
            snprintf(why, sizeof(why), "the free worker ids were taken by other nodes meanwhile");
            continue;
        }
        const core::CoordMarkRead r = coordinator_->read_mark(candidate);
        core::Mark mark;  // ms -1: no mark yet
        const bool readable = r.status.ok() && (!r.found || core::decode_coord_mark(r.value, &mark));
        const int64_t now_ms = host_.id_ms();
        if (!readable || !core::backup_usable(mark.ms, now_ms)) {
            snprintf(why, sizeof(why), !readable ? "the mark of worker id %d could not be read"
                                                 : "every free worker id tried has a mark ahead of the clock",
                     candidate);
            if (!coordinator_->unclaim(candidate, lease_.lease_id).ok()) leave_stray(candidate);
            if (stray_backup_ >= 0) break;  // one key left to give back at a time
            continue;
        }
        // The switch: the own id's mark state is kept for the way back.
        own_mark_revision_ = mark_worker_ == lease_.worker ? mark_revision_ : 0;
        own_unconfirmed_.swap(unconfirmed_);
        unconfirmed_.clear();
        mark_worker_ = candidate;
        mark_revision_ = r.found ? r.revision : 0;
        mark_failures_ = 0;
        backup_worker_ = candidate;
        backup_lease_ = lease_.lease_id;
        backup_since_ns_ = host_.boot_ns();
        own_last_ms_ = host_.start_backup(candidate, mark.ms);
        char text[200], detail[200];
        snprintf(text, sizeof(text), "snowflake clock stepped back: issuing ids under backup worker id %d",
                 candidate);
        // The reading the failover was decided on (now_ms above is later:
        // the claim and the mark read came in between).
        if (avoid >= 0)
            snprintf(detail, sizeof(detail),
                     "The clock is %lld ms behind the last id of backup worker id %d, which was given back; ids "
                     "return to worker id %d when the clock passes its last id.",
                     static_cast<long long>(reading.generator.last_ms - reading.now_ms), avoid, lease_.worker);
        else
            snprintf(detail, sizeof(detail),
                     "The clock is %lld ms behind the last id of worker id %d; ids return to it when the clock "
                     "passes that id.",
                     static_cast<long long>(reading.generator.last_ms - reading.now_ms), lease_.worker);
        host_.log(text, detail, nullptr);
        host_.record_backup_attempt("");
        return;
    }
    host_.record_backup_attempt(why);
    backup_retry_at_ns_ = host_.boot_ns() + core::lease::retry_delay_ns(1, cfg_.ttl_ms);
}

// The clock passed the own id's last millisecond (or, switching, is behind
// the backup's ids too): ids go on under the own id, the backup's exact
// mark is handed over and its key deleted (retried on later turns if that
// fails: it stays ours, in our lease, until then).
void LeaseDriver::end_backup(bool switching) noexcept {
    const int32_t backup = backup_worker_;
    const int64_t backup_last = host_.end_backup(lease_.worker, own_last_ms_);
    if (backup_last >= 0) (void)write_exact_mark(backup, backup_last, mark_revision_);
    if (!coordinator_->unclaim(backup, lease_.lease_id).ok()) leave_stray(backup);
    mark_worker_ = lease_.worker;
    mark_revision_ = own_mark_revision_;
    unconfirmed_.swap(own_unconfirmed_);
    own_unconfirmed_.clear();
    mark_failures_ = 0;
    backup_worker_ = -1;
    char text[200];
    if (switching)
        snprintf(text, sizeof(text),
                 "snowflake clock stepped back behind the ids of backup worker id %d too: released it", backup);
    else
        snprintf(text, sizeof(text), "snowflake back on worker id %d: released backup worker id %d", lease_.worker,
                 backup);
    host_.log(text, nullptr, nullptr);
}

// The lease that held the backup is gone (or a new tenure starts): nothing
// of the backup's or the own id's mark state is ours to trust any more,
// so the next hand-over reads the marks as a new holder would.
// (A key left to give back is not the backup's: it stays to be deleted
// while its lease lives, see turn().)
void LeaseDriver::drop_backup() noexcept {
    if (backup_worker_ < 0) return;
    backup_worker_ = -1;
    mark_worker_ = -1;
    mark_revision_ = 0;
    own_mark_revision_ = 0;
    unconfirmed_.clear();
    own_unconfirmed_.clear();
    host_.backup_lost();
}

void LeaseDriver::leave_stray(int32_t worker) noexcept {
    stray_backup_ = worker;
    stray_lease_ = lease_.lease_id;
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
