// The shard core: start-up, settings, politeness, stats, and the helpers the
// request handlers (shard_urls.cc, shard_signals.cc, shard_crawls.cc) share.
#include "shard/shard.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "cluster/batch_result.h"
#include "cluster/routing.h"
#include "shard/policy_proto.h"
#include "shard/shard_recovery.h"
#include "shard/time_text.h"

namespace recrawl {
namespace shard {
namespace {

// URL-path bytes reserved per estimated URL at start-up: room beyond the
// paths loaded is address space, not memory (PageTable::Reserve), so this
// errs high (a typical path and its two length bytes are ~40-60) to spare
// the arena's doublings, each a copy of it into new memory.
constexpr size_t kReservedPathBytes = 64;

}  // namespace

Shard::Shard(std::unique_ptr<UrlStore> store, const ShardOptions& options)
    : options_(options),
      store_(std::move(store)),
      batch_(store_->NewBatch()),
      index_(options.policy, options.index),
      prior_ranking_(options.learning),
      probes_(options.learning),
      trust_(policy::SourceTrustPrior{options.default_recall, options.default_false_rate, 1.0}),
      host_priors_({options.default_importance, options.default_change_rate, options.default_recall,
                    options.default_false_rate},
                   options.learning, options.host_learning),
      // Peek ids start anywhere, so that one from before a restart is
      // unlikely to name a peek after it (peek_log.h).
      peeks_(absl::Uniform<uint64_t>(absl::BitGen())),
      policy_(options.policy),
      t_delay_(options.t_delay),
      journal_(options.journal_window) {}

Shard::~Shard() = default;

absl::StatusOr<std::unique_ptr<Shard>> Shard::Open(std::unique_ptr<UrlStore> store,
                                                   const ShardOptions& options, double now) {
  if (store == nullptr) return absl::InvalidArgumentError("no store");
  if (options.num_shards < 1 || options.shard_index >= options.num_shards) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shard_index ", options.shard_index, " is not below num_shards ", options.num_shards));
  }
  if (!std::isfinite(now)) {
    return absl::InvalidArgumentError("now must be finite");
  }
  if (!(options.t_delay >= 0.0 && options.t_delay <= options.max_t_delay)) {
    return absl::InvalidArgumentError(
        absl::StrCat("t_delay must be in [0, ", options.max_t_delay, "]"));
  }
  const policy::PageParams defaults{1.0, options.default_change_rate, options.default_recall,
                                    options.default_false_rate};
  if (!IndexableModel(defaults, options.max_rate)) {
    return absl::InvalidArgumentError(
        "default change model: rates must be finite in [0, max_rate] and "
        "recall in [0, 1]");
  }
  if (absl::Status s = CheckHostLearningOptions(options.host_learning, options.learning); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("host_learning: ", s.message()));
  }
  std::unique_ptr<Shard> shard(new Shard(std::move(store), options));
  if (absl::Status s = shard->Start(now); !s.ok()) return s;
  return shard;
}

absl::Status Shard::Start(double now) {
  now_ = now;
  pick_time_ = now;
  absl::StatusOr<ShardMeta> meta = store_->GetShardMeta();
  if (meta.ok()) {
    if (meta->num_shards() != options_.num_shards || meta->shard_index() != options_.shard_index) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the store belongs to shard ", meta->shard_index(), " of ", meta->num_shards(), ", not ",
          options_.shard_index, " of ", options_.num_shards));
    }
    if (!options_.override_policy) {
      absl::StatusOr<policy::CrawlPolicy> stored =
          PolicyFromProto(meta->policy(), options_.max_approx_terms);
      if (stored.ok()) policy_ = *stored;
    }
    if (!options_.override_t_delay && meta->t_delay() >= 0.0 &&
        meta->t_delay() <= options_.max_t_delay) {
      t_delay_ = meta->t_delay();
    }
    next_lease_id_ = std::max<uint64_t>(meta->lease_id_limit(), 1);
    // Stores made before site routing say nothing: they route by host.
    absl::StatusOr<cluster::Routing> stored =
        meta->routing().empty() ? cluster::Routing::kHost : cluster::ParseRouting(meta->routing());
    if (!stored.ok()) return stored.status();
    if (options_.routing.has_value() && *options_.routing != *stored) {
      return absl::FailedPreconditionError(
          absl::StrCat("the store routes URLs by ", cluster::RoutingName(*stored), ", not by ",
                       cluster::RoutingName(*options_.routing),
                       ": a cluster keeps the routing its stores were made with (leave "
                       "--routing out, and run the coordinator with --routing=",
                       cluster::RoutingName(*stored), ")"));
    }
    routing_ = *stored;
  } else if (!absl::IsNotFound(meta.status())) {
    return meta.status();
  } else {
    routing_ = options_.routing.value_or(cluster::Routing::kSite);
  }
  // Ids below the stored limit may have been handed out before a crash:
  // start a new block.
  lease_id_limit_ = next_lease_id_ + options_.lease_id_block;
  WriteMeta();
  if (absl::Status s = Commit(/*sync=*/true); !s.ok()) return s;
  index_.SetPolicy(policy_);

  auto step = std::chrono::steady_clock::now();
  auto seconds = [&step] {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - step).count();
    step = now;
    return s;
  };
  absl::StatusOr<ScanStats> hosts = store_->ScanHosts([this](const HostRecord& record) {
    const HostId host = hosts_.Intern(record.host());
    HostTable::Host& h = hosts_.Politeness(host);
    if (std::isfinite(record.min_delay()) && record.min_delay() >= 0.0) {
      h.min_delay = record.min_delay();
      index_.SetHostDelay(host, h.min_delay);
    }
    if (std::isfinite(record.blocked_until())) {
      h.blocked_until = record.blocked_until();
      index_.BlockHost(host, h.blocked_until);
    }
    if (record.has_trust()) {
      if (absl::Status s = trust_.Restore(host, record.trust()); !s.ok()) {
        ++startup_.skipped_host_trust;
      }
    }
    if (record.has_learning()) {
      if (absl::Status s = host_priors_.Restore(host, record.learning()); !s.ok()) {
        ++startup_.skipped_host_trust;
      }
    }
  });
  if (!hosts.ok()) return hosts.status();
  startup_.hosts = hosts->records;
  startup_.hosts_seconds = seconds();

  const uint64_t estimate = store_->EstimatedUrlCount();
  startup_.estimated_urls = static_cast<int64_t>(estimate);
  pages_.Reserve(estimate, estimate * kReservedPathBytes);
  index_.Reserve(estimate);
  // The load writes a slot and a page record for each URL, into memory the
  // kernel zeroes at its first write: on a VM about a third of the loading
  // thread's time at 10^7 URLs. The side thread has it zeroed ahead, beside the load
  // (huge_page_allocator.h), and what the estimate had too many is given
  // back after. (Should a table outgrow the estimate and move, a populate
  // of its old range only fails.) Not the URL text's arena: its
  // reservation errs high by about half (kReservedPathBytes), and zeroing
  // that took more from the scanning threads than it spared the loader.
  const std::vector<MemoryRange> reserved = {pages_.SpareSlots(), index_.SparePages()};
  Side().Start([&reserved] { PopulateInTurn(reserved, /*steps=*/64); });
  absl::StatusOr<ScanStats> urls;
  {
    // The load's and the replay's scratch state goes with `recovery`.
    Recovery recovery(this);
    urls = recovery.LoadUrls();
    Side().Wait();
    Release(pages_.SpareSlots());
    Release(index_.SparePages());
    if (!urls.ok()) return urls.status();
    startup_.load_seconds = seconds();
    if (absl::Status s = recovery.ReplayJournal(); !s.ok()) return s;
  }
  startup_.replay_seconds = seconds();
  startup_.leases = static_cast<int64_t>(leases_.active());
  startup_.holds = static_cast<int64_t>(leases_.holds());
  IndexLoadedState();
  startup_.index_seconds = seconds();
  startup_.malformed += urls->malformed + hosts->malformed;
  startup_.orphans = urls->orphans;
  for (std::vector<std::string>* errors : {&hosts->errors, &urls->errors}) {
    for (std::string& e : *errors) {
      if (startup_.errors.size() < ScanStats::kMaxErrors) {
        startup_.errors.push_back(std::move(e));
      }
    }
  }
  // The index's one O(m) step (setting its level Λ) happens at its first
  // pick: take it now rather than in the first client's request.
  seconds();
  index_.PickTop(now_, 1);
  startup_.level_seconds = seconds();
  // Compactions a store deferred to here (UrlStoreOptions) start now.
  return store_->EnableCompactions();
}

// ---------------------------------------------------------------- helpers

bool Shard::IndexableModel(const policy::PageParams& p, double max_rate) {
  auto rate = [max_rate](double r) { return r >= 0.0 && r <= max_rate; };
  return std::isfinite(p.importance) && p.importance >= 0.0 && rate(p.change_rate) &&
         rate(p.false_rate) && p.recall >= 0.0 && p.recall <= 1.0;
}

policy::PageParams Shard::IndexView(HostId host, const policy::PageParams& model) const {
  policy::PageParams view = model;
  trust_.TrustedModel(host, &view.recall, &view.false_rate);
  const double signalled = view.recall * view.change_rate;
  if (signalled >= options_.min_signal_precision * (signalled + view.false_rate)) {
    return view;
  }
  view.recall = 0.0;
  view.false_rate = 0.0;
  return view;
}

policy::PageParams Shard::RankingModel(HostId host, const policy::PageParams& model, bool learnt) {
  if (learnt) return model;
  if (host_priors_.IsDefault(model)) {
    if (std::optional<policy::PageParams> pooled =
            host_priors_.NewPageModel(host, model.importance);
        pooled.has_value() && IndexableModel(*pooled, options_.max_rate)) {
      return *pooled;
    }
  }
  const policy::PageParams ranked = prior_ranking_.Ranked(model);
  return IndexableModel(ranked, options_.max_rate) ? ranked : model;
}

policy::PageParams Shard::Defaults() const {
  return {options_.default_importance, options_.default_change_rate, options_.default_recall,
          options_.default_false_rate};
}

absl::Status Shard::CheckWritable() const {
  if (write_error_.ok()) return absl::OkStatus();
  return absl::UnavailableError(
      absl::StrCat("the shard's store failed a write earlier and takes no "
                   "more; restart the shard (",
                   write_error_.message(), ")"));
}

absl::Status Shard::BeginWrite(double now) {
  if (absl::Status s = CheckWritable(); !s.ok()) return s;
  return Advance(now);
}

absl::Status Shard::CheckBatchSize(absl::string_view field, int items) const {
  if (items <= options_.max_batch_items) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(field, ": ", items, " items, more than the ",
                                                   options_.max_batch_items,
                                                   " allowed per request"));
}

absl::Status Shard::Advance(double now) {
  if (!std::isfinite(now)) return absl::InvalidArgumentError("now: not finite");
  now_ = std::max(now_, now);
  std::vector<PageId> due;
  leases_.Expire(now_, &due);
  expired_leases_total_ += due.size();
  leases_.ExpireHolds(now_, &due);
  for (PageId page : due) index_.ReleaseLease(page);
  return absl::OkStatus();
}

absl::Status Shard::Commit(bool sync) {
  if (batch_.count() == 0) return absl::OkStatus();
  const Durability durability = sync || options_.sync_writes ? Durability::kSync : Durability::kWal;
  absl::Status s = store_->Write(&batch_, durability);
  if (!s.ok()) write_error_ = s;
  return s;
}

absl::Status Shard::CommitAlongside(bool sync, size_t items, absl::FunctionRef<void()> work) {
  if (items < kOverlappedItems) {
    work();
    return Commit(sync);
  }
  // A bulk load spends about as long writing the store (the memtable's
  // inserts) as making its pages: side by side they take the longer of the
  // two.
  // The pages are made on the side thread, the one that waits least for
  // the other: the write takes longer, and the side thread may be a few
  // hundred microseconds late to start on a busy machine.
  Side().Start(work);
  absl::Status written = Commit(sync);
  Side().Wait();
  return written;
}

SideThread& Shard::Side() {
  if (side_ == nullptr) side_ = std::make_unique<SideThread>();
  return *side_;
}

void Shard::WriteMeta() {
  ShardMeta meta;
  meta.set_shard_index(options_.shard_index);
  meta.set_num_shards(options_.num_shards);
  *meta.mutable_policy() = PolicyToProto(policy_);
  meta.set_t_delay(t_delay_);
  meta.set_lease_id_limit(lease_id_limit_);
  meta.set_routing(std::string(cluster::RoutingName(routing_)));
  batch_.PutShardMeta(meta);
}

// Lease ids come from blocks reserved in the meta record, written in the
// same batch as the leases, so that an id is never handed out twice, even
// across a crash.
uint64_t Shard::NextLeaseId() {
  if (next_lease_id_ >= lease_id_limit_) {
    lease_id_limit_ = next_lease_id_ + options_.lease_id_block;
    WriteMeta();
  }
  return next_lease_id_++;
}

absl::StatusOr<double> Shard::LeaseDuration(double requested) const {
  const double duration = requested == 0.0 ? options_.default_lease_duration : requested;
  if (!(duration > 0.0 && duration <= options_.max_lease_duration)) {
    return absl::InvalidArgumentError(absl::StrCat("lease_duration: must be in (0, ",
                                                   TimeText(options_.max_lease_duration),
                                                   "] seconds, got ", TimeText(requested)));
  }
  return duration;
}

absl::StatusOr<double> Shard::ItemTime(double t, const char* field) const {
  if (t == 0.0) return now_;
  if (!std::isfinite(t) || t < 0.0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": must be finite and >= 0, got ", TimeText(t)));
  }
  if (t > now_ + options_.max_clock_skew) {
    if (options_.clamp_future_times) return now_;
    return absl::OutOfRangeError(absl::StrCat(
        field, ": ", TimeText(t), " is ", TimeText(t - now_), " s ahead of the shard's clock (",
        TimeText(now_), "); at most ", TimeText(options_.max_clock_skew), " s are allowed"));
  }
  return std::min(t, now_);
}

int32_t Shard::OwnerOf(absl::string_view host) const {
  return cluster::OwnerOfHost(host, routing_, static_cast<int32_t>(options_.num_shards));
}

absl::Status Shard::CheckOwner(absl::string_view host, const char* field) const {
  const int32_t owner = OwnerOf(host);
  if (owner == static_cast<int32_t>(options_.shard_index)) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      field, ": host \"", host, "\" belongs to shard ", owner, " of ", options_.num_shards, " (by ",
      cluster::RoutingName(routing_), "), this is shard ", options_.shard_index));
}

bool Shard::EndLeaseAndHold(PageId page) {
  const bool leased = leases_.Release(page);
  const bool held = leases_.Unhold(page);
  return leased || held;
}

void Shard::RemovePage(PageId page) {
  if (const uint32_t crawls = pages_.LearningCrawls(page); crawls > 0) {
    --urls_learning_;
    observed_crawls_sum_ -= crawls;
    const HostId host = Indexed(page).host;
    if (options_.pool_host_priors && host_priors_.RemovePage(host, page, pages_.Learning(page))) {
      WriteHost(host);  // its first fit
    }
  }
  batch_.DeleteUrl(pages_[page].id);
  EndLeaseAndHold(page);
  index_.Remove(page);
  pages_.Remove(page);
}

// ---------------------------------------------------------------- settings

absl::StatusOr<SetHostPolitenessResponse> Shard::SetHostPoliteness(
    const SetHostPolitenessRequest& req, double now) {
  if (absl::Status s = CheckBatchSize("hosts", req.hosts_size()); !s.ok()) {
    return s;
  }
  if (absl::Status s = BeginWrite(now); !s.ok()) return s;
  SetHostPolitenessResponse response;
  BatchResult* result = response.mutable_result();
  for (int i = 0; i < req.hosts_size(); ++i) {
    const HostPoliteness& h = req.hosts(i);
    auto reject = [&](const absl::Status& s) { cluster::AddRejection(i, s, result); };
    absl::StatusOr<std::string> name = cluster::NormalizeHost(h.host());
    if (!name.ok()) {
      reject(absl::InvalidArgumentError(absl::StrCat("host: ", name.status().message())));
      continue;
    }
    if (absl::Status s = CheckOwner(*name, "host"); !s.ok()) {
      reject(s);
      continue;
    }
    if (h.has_min_delay() && !(h.min_delay() >= 0.0 && h.min_delay() <= options_.max_host_delay)) {
      reject(absl::InvalidArgumentError(absl::StrCat("min_delay: must be in [0, ",
                                                     options_.max_host_delay, "] seconds, got ",
                                                     h.min_delay())));
      continue;
    }
    if (h.has_blocked_until() && !std::isfinite(h.blocked_until())) {
      reject(absl::InvalidArgumentError("blocked_until: must be finite"));
      continue;
    }
    const HostId host = hosts_.Intern(*name);
    HostTable::Host& p = hosts_.Politeness(host);
    if (h.has_min_delay()) {
      p.min_delay = h.min_delay();
      index_.SetHostDelay(host, p.min_delay);
    }
    if (h.has_blocked_until()) {
      p.blocked_until = h.blocked_until();
      index_.BlockHost(host, p.blocked_until);
    }
    batch_.PutHost(HostRecordOf(host));
    result->set_applied(result->applied() + 1);
  }
  if (absl::Status s = Commit(req.sync()); !s.ok()) return s;
  return response;
}

absl::StatusOr<SetPolicyResponse> Shard::SetPolicy(const SetPolicyRequest& req, double now) {
  if (absl::Status s = BeginWrite(now); !s.ok()) return s;
  policy::CrawlPolicy policy = policy_;
  if (req.policy().kind() != POLICY_KIND_UNSPECIFIED) {
    absl::StatusOr<policy::CrawlPolicy> p =
        PolicyFromProto(req.policy(), options_.max_approx_terms);
    if (!p.ok()) return p.status();
    policy = *p;
  }
  double t_delay = t_delay_;
  if (req.has_t_delay()) {
    if (!(req.t_delay() >= 0.0 && req.t_delay() <= options_.max_t_delay)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "t_delay: must be in [0, ", options_.max_t_delay, "] seconds, got ", req.t_delay()));
    }
    t_delay = req.t_delay();
  }
  if (!(policy == policy_)) {
    policy_ = policy;
    index_.SetPolicy(policy_);
  }
  t_delay_ = t_delay;
  WriteMeta();
  if (absl::Status s = Commit(/*sync=*/true); !s.ok()) return s;
  SetPolicyResponse response;
  *response.mutable_policy() = PolicyToProto(policy_);
  response.set_t_delay(t_delay_);
  return response;
}

// ---------------------------------------------------------------- stats

ShardStats Shard::GetStats(double now) {
  Advance(now).IgnoreError();  // a non-finite `now` leaves the clock as is
  ShardStats s;
  s.set_shard_index(options_.shard_index);
  s.set_num_shards(options_.num_shards);
  s.set_routing(std::string(cluster::RoutingName(routing_)));
  s.set_time(now_);
  s.set_urls(pages_.size());
  s.set_hosts(hosts_.size());
  s.set_leases_in_flight(leases_.active());
  s.set_signals_per_second(signal_rate_.Rate(now_));
  s.set_picks_per_second(pick_rate_.Rate(now_));
  s.set_reports_per_second(report_rate_.Rate(now_));
  s.set_crawl_value_level(last_pick_value_);
  *s.mutable_policy() = PolicyToProto(policy_);
  s.set_t_delay(t_delay_);
  EstimatorHealth* e = s.mutable_estimator();
  e->set_urls_learning(urls_learning_);
  e->set_rejected_fits(rejected_fits_);
  e->set_probe_leases_total(probes_.taken());
  e->set_probes_pending(probes_.size());
  e->set_hosts_learning_trust(trust_.size());
  e->set_rejected_trust_intervals(rejected_trust_);
  e->set_hosts_pooled(host_priors_.size());
  e->set_mean_observed_crawls(
      urls_learning_ > 0 ? static_cast<double>(observed_crawls_sum_) / urls_learning_ : 0.0);
  s.set_signals_total(signals_total_);
  s.set_leases_total(leases_total_);
  s.set_reports_total(reports_total_);
  s.set_expired_leases_total(expired_leases_total_);
  s.set_released_leases_total(leases_released_total_);
  s.set_peeked_leases_total(peeked_leases_total_);
  const SchedulingIndex::Stats& work = index_.stats();
  IndexWork* w = s.mutable_index();
  w->set_candidates(index_.candidates());
  w->set_valuations(work.valuations);
  w->set_wakeups(work.wakeups);
  w->set_rebuilds(work.rebuilds);
  w->set_raises(work.raises);
  w->set_reserve_pulls(work.pulls);
  w->set_host_waits(work.host_waits);
  return s;
}

HostRecord Shard::HostRecordOf(HostId host) const {
  HostRecord record;
  record.set_host(std::string(hosts_.Name(host)));
  const HostTable::Host p = hosts_.FindPoliteness(host);
  record.set_min_delay(p.min_delay);
  record.set_blocked_until(std::isfinite(p.blocked_until) ? p.blocked_until : 0.0);
  if (!trust_.ToRecord(host, record.mutable_trust())) record.clear_trust();
  if (!host_priors_.ToRecord(host, record.mutable_learning())) record.clear_learning();
  return record;
}

void Shard::WriteHost(HostId host) {
  batch_.PutHost(HostRecordOf(host));
  trust_.MarkWritten(host);
  host_priors_.MarkWritten(host);
}

absl::Status Shard::Flush() {
  std::vector<HostId> hosts = trust_.TakeUnwritten();
  for (HostId host : host_priors_.TakeUnwritten()) hosts.push_back(host);
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  if (!hosts.empty()) {
    if (absl::Status s = CheckWritable(); !s.ok()) return s;
    for (HostId host : hosts) batch_.PutHost(HostRecordOf(host));
    if (absl::Status s = Commit(/*sync=*/true); !s.ok()) return s;
  }
  return store_->Flush();
}

size_t Shard::MemoryBytes() const {
  return index_.MemoryBytes() + pages_.MemoryBytes() + hosts_.MemoryBytes() + trust_.MemoryBytes() +
         host_priors_.MemoryBytes() + leases_.size() * 96 + leases_.holds() * 64;
}

}  // namespace shard
}  // namespace recrawl
