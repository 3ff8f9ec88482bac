// The shard core: start-up, settings, politeness, stats, and the helpers the
// request handlers (shard_urls.cc, shard_signals.cc, shard_crawls.cc) share.
#include "shard/shard.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "shard/batch_result.h"
#include "shard/journal_format.h"
#include "shard/journal_reader.h"
#include "shard/learning_record.h"
#include "shard/policy_proto.h"
#include "shard/routing.h"
#include "shard/signal_keys.h"
#include "shard/time_text.h"
#include "shard/store/parallel_scan.h"
#include "shard/url_id.h"

namespace recrawl {
namespace shard {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The prior of a record, with the defaults where a field is missing
// (records written by the shard always have all three).
policy::PageParams PriorOf(const ChangeModel& m,
                           const policy::PageParams& defaults) {
  policy::PageParams p = defaults;
  if (m.has_change_rate()) p.change_rate = m.change_rate();
  if (m.has_recall()) p.recall = m.recall();
  if (m.has_false_rate()) p.false_rate = m.false_rate();
  return p;
}

// Where a normalised URL's path begins: after "scheme://authority".
// The host of a normalised URL's prefix "scheme://host[:port]" (host may
// be an IPv6 literal in brackets).
absl::string_view UrlHostOf(absl::string_view prefix) {
  const size_t scheme = prefix.find("://");
  if (scheme == absl::string_view::npos) return {};
  absl::string_view host = prefix.substr(scheme + 3);
  const size_t end = host.rfind(':');
  if (end != absl::string_view::npos && host.find(']', end) ==
                                            absl::string_view::npos) {
    host = host.substr(0, end);  // a port, not a colon of an IPv6 literal
  }
  return host;
}

size_t PathBegin(absl::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == absl::string_view::npos) return 0;
  const size_t path = url.find('/', scheme + 3);
  return path == absl::string_view::npos ? url.size() : path;
}

}  // namespace

// A record as start-up needs it, decoded on a scanning thread
// (store/parallel_scan.h).
struct Shard::LoadedUrl {
  UrlId id = 0;
  // Why the record is skipped, or nullptr.
  const char* malformed = nullptr;
  std::string url;
  size_t path = 0;   // where the URL's path begins
  std::string host;  // the politeness host
  // StringInterner::HashOf the URL's prefix and of the host, computed by the
  // scanning threads.
  uint32_t prefix_hash = 0;
  uint32_t host_hash = 0;
  // The politeness host is the URL's own.
  bool host_is_url_host = false;
  policy::PageParams model;
  LearningState learning;
  double last_crawl = 0.0;
  uint16_t n_cis = 0;
  uint8_t failures = 0;
  bool has_digest = false;
  uint32_t digest = 0;
  uint64_t signal_filter = 0;
  float latest_signal = -1.0f;
  uint64_t signal_seq = 0;
  // A lease in the record (store format 2 and before).
  uint64_t lease_id = 0;
  std::string lease_holder;
  double lease_deadline = 0.0;
  double retry_after = 0.0;
};

Shard::Shard(std::unique_ptr<UrlStore> store, const ShardOptions& options)
    : options_(options),
      store_(std::move(store)),
      batch_(store_->NewBatch()),
      index_(options.policy, options.index),
      prior_ranking_(options.learning),
      probes_(options.learning),
      policy_(options.policy),
      t_delay_(options.t_delay),
      journal_(options.journal_window) {}

Shard::~Shard() = default;

absl::StatusOr<std::unique_ptr<Shard>> Shard::Open(
    std::unique_ptr<UrlStore> store, const ShardOptions& options, double now) {
  if (store == nullptr) return absl::InvalidArgumentError("no store");
  if (options.num_shards < 1 || options.shard_index >= options.num_shards) {
    return absl::InvalidArgumentError(
        absl::StrCat("shard_index ", options.shard_index,
                     " is not below num_shards ", options.num_shards));
  }
  if (!std::isfinite(now)) {
    return absl::InvalidArgumentError("now must be finite");
  }
  if (!(options.t_delay >= 0.0 && options.t_delay <= options.max_t_delay)) {
    return absl::InvalidArgumentError(
        absl::StrCat("t_delay must be in [0, ", options.max_t_delay, "]"));
  }
  const policy::PageParams defaults{1.0, options.default_change_rate,
                                    options.default_recall,
                                    options.default_false_rate};
  if (!IndexableModel(defaults, options.max_rate)) {
    return absl::InvalidArgumentError(
        "default change model: rates must be finite in [0, max_rate] and "
        "recall in [0, 1]");
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
    if (meta->num_shards() != options_.num_shards ||
        meta->shard_index() != options_.shard_index) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the store belongs to shard ", meta->shard_index(), " of ",
          meta->num_shards(), ", not ", options_.shard_index, " of ",
          options_.num_shards));
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
    absl::StatusOr<Routing> stored =
        meta->routing().empty() ? Routing::kHost : ParseRouting(meta->routing());
    if (!stored.ok()) return stored.status();
    if (options_.routing.has_value() && *options_.routing != *stored) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the store routes URLs by ", RoutingName(*stored), ", not by ",
          RoutingName(*options_.routing),
          ": a cluster keeps the routing its stores were made with (leave "
          "--routing out, and run the coordinator with --routing=",
          RoutingName(*stored), ")"));
    }
    routing_ = *stored;
  } else if (!absl::IsNotFound(meta.status())) {
    return meta.status();
  } else {
    routing_ = options_.routing.value_or(Routing::kSite);
  }
  // Ids below the stored limit may have been handed out before a crash:
  // start a new block.
  lease_id_limit_ = next_lease_id_ + options_.lease_id_block;
  WriteMeta();
  if (absl::Status s = Commit(/*sync=*/true); !s.ok()) return s;
  index_.SetPolicy(policy_);

  absl::StatusOr<ScanStats> hosts =
      store_->ScanHosts([this](const HostRecord& record) {
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
      });
  if (!hosts.ok()) return hosts.status();
  startup_.hosts = hosts->records;

  const uint64_t estimate = store_->EstimatedUrlCount();
  startup_.estimated_urls = static_cast<int64_t>(estimate);
  pages_.Reserve(estimate);
  index_.Reserve(estimate);
  auto step = std::chrono::steady_clock::now();
  auto seconds = [&step] {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - step).count();
    step = now;
    return s;
  };
  load_last_id_.assign(std::max(options_.startup_threads, 1), std::nullopt);
  absl::StatusOr<ScanStats> urls = ParallelScanUrls<LoadedUrl>(
      *store_, options_.startup_threads,
      [this](UrlId id, const UrlRecord& record, LoadedUrl* out) {
        out->id = id;
        DecodeRecord(record, out);
      },
      [this](int part, const LoadedUrl& u) { LoadUrl(part, u); });
  if (!urls.ok()) return urls.status();
  pages_.IndexAll();
  startup_.load_seconds = seconds();
  if (absl::Status s = ReplayJournal(); !s.ok()) return s;
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
  return absl::OkStatus();
}

// What LoadUrl needs of a record; values the shard would not accept from a
// client make it malformed. Thread-safe: reads only the options.
void Shard::DecodeRecord(const UrlRecord& record, LoadedUrl* out) const {
  out->malformed = nullptr;
  out->url.assign(record.url());
  const policy::PageParams prior = PriorOf(record.prior(), Defaults());
  policy::PageParams model = prior;
  model.importance = record.importance();
  if (record.has_estimate()) model = PriorOf(record.estimate(), model);
  if (!IndexableModel(model, options_.max_rate) ||
      !(model.importance <= options_.max_importance) ||
      !IndexableModel(prior, options_.max_rate)) {
    out->malformed = "change model or importance out of range";
    return;
  }
  out->last_crawl = record.last_crawl_time();
  if (!std::isfinite(out->last_crawl)) {
    out->malformed = "last crawl time not finite";
    return;
  }
  if (!record.politeness_host().empty()) {
    out->host.assign(record.politeness_host());
  } else if (absl::StatusOr<NormalizedUrl> n = NormalizeUrl(record.url());
             n.ok()) {
    const absl::string_view host = n->host();
    out->host.assign(host.data(), host.size());
  } else {
    out->malformed = "no politeness host, and the URL does not parse";
    return;
  }
  out->path = PathBegin(out->url);
  out->host_is_url_host =
      out->host == UrlHostOf(absl::string_view(out->url).substr(0, out->path));
  out->prefix_hash =
      StringInterner::HashOf(absl::string_view(out->url).substr(0, out->path));
  out->host_hash = StringInterner::HashOf(out->host);
  out->model = model;
  out->learning = LearningFromRecord(record.learning(), prior);
  out->n_cis = static_cast<uint16_t>(
      std::min<uint32_t>(record.signals_since_crawl(), 0xffff));
  out->failures = static_cast<uint8_t>(
      std::min<uint32_t>(record.consecutive_failures(), 0xff));
  out->has_digest = record.has_content_digest();
  out->digest =
      out->has_digest
          ? static_cast<uint32_t>(Fingerprint64(record.content_digest()))
          : 0;
  if (record.has_signal_filter()) {
    out->signal_filter = record.signal_filter();
    out->latest_signal = record.latest_signal();
  } else {
    // Format 1: the newest n_cis keys are those of the signals since the
    // last crawl (each counted signal appended one).
    out->signal_filter = 0;
    out->latest_signal = -1.0f;
    const int keys = record.recent_signal_keys_size();
    for (int k = std::max(0, keys - static_cast<int>(out->n_cis)); k < keys;
         ++k) {
      AddSignal(record.recent_signal_keys(k), &out->signal_filter);
    }
    if (out->n_cis > 0 && record.has_last_signal_time()) {
      out->latest_signal = std::max(
          LatestSignalOffset(record.last_signal_time() - out->last_crawl),
          0.0f);
    }
  }
  out->signal_seq = record.signal_seq();
  const LeaseRecord& lease = record.lease();
  out->lease_id = lease.id();
  out->lease_deadline = lease.deadline();
  if (lease.id() != 0) {
    out->lease_holder.assign(lease.holder());
  } else {
    out->lease_holder.clear();
  }
  out->retry_after = record.retry_after();
}

// Rebuilds one URL's memory from its decoded record.
void Shard::LoadUrl(int part, const LoadedUrl& u) {
  auto malformed = [this, &u](absl::string_view why) {
    ++startup_.malformed;
    if (startup_.errors.size() < ScanStats::kMaxErrors) {
      startup_.errors.push_back(
          absl::StrCat("urls/", u.url.substr(0, 64), ": ", why));
    }
  };
  if (u.malformed != nullptr) {
    malformed(u.malformed);
    return;
  }
  // A part's scan goes in key order, which is id order: an id not above the
  // previous one is a duplicate (or the store broke its order).
  std::optional<UrlId>& last_id = load_last_id_[part];
  if (last_id.has_value() && u.id <= *last_id) {
    malformed("duplicate id");
    return;
  }
  const PageId page = pages_.AddUnindexed(u.id);
  last_id = u.id;
  const absl::string_view url = u.url;
  uint32_t prefix = 0;
  if (!pages_.SetUrl(page, {url.substr(0, u.path), u.prefix_hash},
                     url.substr(u.path), &prefix)) {
    pages_.Remove(page);
    malformed("URL text arena full");
    return;
  }
  // Most URLs are polite by their own host, which their prefix determines:
  // its id is kept per prefix, sparing a lookup (and a compare of names)
  // per URL.
  HostId host;
  if (u.host_is_url_host) {
    if (load_prefix_host_.size() <= prefix) {
      load_prefix_host_.resize(prefix + 1, kNoHost);
    }
    HostId& cached = load_prefix_host_[prefix];
    if (cached == kNoHost) cached = hosts_.Intern({u.host, u.host_hash});
    host = cached;
  } else {
    host = hosts_.Intern({u.host, u.host_hash});
  }
  PageSlot& slot = pages_[page];
  slot.importance = static_cast<float>(u.model.importance);
  slot.change_rate = static_cast<float>(u.model.change_rate);
  slot.recall = static_cast<float>(u.model.recall);
  slot.false_rate = static_cast<float>(u.model.false_rate);
  // After the model: the table keeps an entry only where the state is more
  // than the model as prior.
  pages_.SetLearning(page, u.learning);
  if (u.has_digest) pages_.SetDigest(page, u.digest);
  slot.n_cis = u.n_cis;
  slot.failures = u.failures;
  slot.signal_filter = u.signal_filter;
  slot.latest_signal = u.latest_signal;
  if (load_seq_.size() <= page) load_seq_.resize(page + 1, 0);
  load_seq_[page] = u.signal_seq;
  load_max_seq_ = std::max(load_max_seq_, u.signal_seq);
  if (const uint32_t crawls = pages_.LearningCrawls(page); crawls > 0) {
    ++urls_learning_;
    observed_crawls_sum_ += crawls;
  }

  // The index keeps the page's host and last crawl for the shard; it hears
  // of the signals in IndexLoadedState, once the journal has given them
  // all.
  index_.Upsert(page,
                IndexView(RankingModel(u.model, u.learning.crawls > 0)), host,
                u.last_crawl);
  if (u.lease_id != 0 && std::isfinite(u.lease_deadline)) {
    // (Records of store format 2 and before; leases are journaled now.)
    leases_.Grant(u.lease_id, page, u.lease_holder, u.lease_deadline,
                  /*active=*/u.lease_deadline > now_);
  }
  if (u.retry_after > now_ && std::isfinite(u.retry_after) &&
      leases_.OfPage(page) == nullptr) {
    leases_.Hold(page, u.retry_after);
  }
  ++startup_.urls;
}

// The journal's entries on top of the records: a record applies to its URL
// if its entry is not older than the record's signal_seq (the record has
// the earlier ones, or they were before its last crawl, which also ended
// any lease granted before).
absl::Status Shard::ReplayJournal() {
  // The pages of the current entry's records, in record order.
  std::vector<PageId> found;
  JournalReader reader(store_.get());
  absl::StatusOr<int64_t> entries =
      reader.ReadAll([&](uint64_t seq, absl::string_view entry) {
        // Into `found`, by the second pass below.
        size_t next_found = 0;
        auto signal = [&](const JournalSignal& s) {
          const PageId page = found[next_found++];
          if (page == kNoPage || seq < load_seq_[page]) return;
          PageSlot& slot = pages_[page];
          AddSignal(s.key, &slot.signal_filter);
          if (slot.n_cis < 0xffff) ++slot.n_cis;
          const double offset = s.time - LastCrawl(page);
          if (offset > slot.latest_signal) {
            slot.latest_signal = LatestSignalOffset(offset);
          }
          MarkUnfolded(page, seq);
        };
        // A state record holds everything since the last crawl, so n_cis
        // only grows from what the record or earlier entries gave.
        auto state = [&](const JournalState& s) {
          const PageId page = found[next_found++];
          if (page == kNoPage || seq < load_seq_[page]) return;
          PageSlot& slot = pages_[page];
          slot.n_cis = std::max(slot.n_cis, s.n_cis);
          slot.signal_filter |= s.filter;
          slot.latest_signal = std::max(slot.latest_signal, s.latest);
          MarkUnfolded(page, seq);
        };
        // A later grant replaces an earlier one (a URL has one lease at a
        // time); one past its deadline is kept inactive, as a record's was.
        // A hold from the record (a failed fetch) stays: the fetch was after
        // the grant, whose end follows in an 'E' record.
        auto lease = [&](const JournalLease& l) {
          const PageId page = found[next_found++];
          if (page == kNoPage || seq < load_seq_[page]) return;
          if (l.id == 0 || !std::isfinite(l.deadline)) {
            ++startup_.malformed;
            return;
          }
          leases_.Grant(l.id, page, std::string(l.holder), l.deadline,
                        /*active=*/l.deadline > now_);
          MarkUnfolded(page, seq);
        };
        auto lease_end = [&](const JournalLeaseEnd& e) {
          const PageId page = found[next_found++];
          if (page == kNoPage || seq < load_seq_[page]) return;
          const LeaseTable::Lease* lease = leases_.OfPage(page);
          if (lease != nullptr && lease->id == e.id) leases_.Release(page);
        };
        // An entry's URLs are random pages, each a few dependent cache
        // misses (the id table, the slot it points to, the record's
        // signal_seq, the index's page): in three passes over the entry the
        // misses of its records overlap instead of coming one after the
        // other. First the id table's lines, then each URL's page (looked up
        // in cache) with that page's lines, then the records applied to the
        // pages found, in the same order.
        JournalReader::ForEachUrl(entry,
                                  [&](UrlId url) { pages_.Prefetch(url); });
        found.clear();
        JournalReader::ForEachUrl(entry, [&](UrlId url) {
          const PageId page = pages_.Find(url);
          found.push_back(page);
          if (page == kNoPage) return;
          __builtin_prefetch(&pages_[page]);
          __builtin_prefetch(&load_seq_[page]);
          index_.Prefetch(page);
        });
        const bool whole = JournalReader::ForEachRecord(
            entry, {signal, state, lease, lease_end});
        if (!whole) ++startup_.malformed;
      });
  if (!entries.ok()) return entries.status();
  // The next entry follows the last one stored and every record's.
  uint64_t next_seq = std::max<uint64_t>(load_max_seq_, 1);
  if (!reader.empty()) next_seq = std::max(next_seq, reader.last_seq() + 1);
  journal_.Restore(next_seq, reader.empty() ? next_seq : reader.first_seq());
  startup_.journal_entries = *entries;
  std::vector<uint64_t>().swap(load_seq_);
  std::vector<HostId>().swap(load_prefix_host_);
  std::vector<std::optional<UrlId>>().swap(load_last_id_);
  return absl::OkStatus();
}

// The loaded pages' signal counts, as the replay left them, into the index
// (one call per page however many signals the journal gave it), and their
// leases and holds.
void Shard::IndexLoadedState() {
  for (PageId page = 0; page < pages_.end(); ++page) {
    const PageSlot& slot = pages_[page];
    if (!slot.in_use) continue;
    if (slot.n_cis > 0) {
      const double last_crawl = LastCrawl(page);
      const double latest = slot.latest_signal >= 0.0f
                                ? LastSignalTime(slot, last_crawl)
                                : last_crawl;
      index_.RecordSignals(page, latest, slot.n_cis);
    }
    const LeaseTable::Lease* lease = leases_.OfPage(page);
    if ((lease != nullptr && lease->active) || leases_.Held(page)) {
      index_.Lease(page);
    }
  }
}

// ---------------------------------------------------------------- helpers

bool Shard::IndexableModel(const policy::PageParams& p, double max_rate) {
  auto rate = [max_rate](double r) { return r >= 0.0 && r <= max_rate; };
  return std::isfinite(p.importance) && p.importance >= 0.0 &&
         rate(p.change_rate) && rate(p.false_rate) && p.recall >= 0.0 &&
         p.recall <= 1.0;
}

policy::PageParams Shard::IndexView(const policy::PageParams& model) const {
  const double signalled = model.recall * model.change_rate;
  if (signalled >= options_.min_signal_precision *
                       (signalled + model.false_rate)) {
    return model;
  }
  policy::PageParams view = model;
  view.recall = 0.0;
  view.false_rate = 0.0;
  return view;
}

policy::PageParams Shard::RankingModel(const policy::PageParams& model,
                                       bool learnt) {
  if (learnt) return model;
  const policy::PageParams ranked = prior_ranking_.Ranked(model);
  return IndexableModel(ranked, options_.max_rate) ? ranked : model;
}

policy::PageParams Shard::Defaults() const {
  return {options_.default_importance, options_.default_change_rate,
          options_.default_recall, options_.default_false_rate};
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
  return absl::ResourceExhaustedError(
      absl::StrCat(field, ": ", items, " items, more than the ",
                   options_.max_batch_items, " allowed per request"));
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
  const Durability durability = sync || options_.sync_writes
                                    ? Durability::kSync
                                    : Durability::kWal;
  absl::Status s = store_->Write(&batch_, durability);
  if (!s.ok()) write_error_ = s;
  return s;
}

void Shard::WriteMeta() {
  ShardMeta meta;
  meta.set_shard_index(options_.shard_index);
  meta.set_num_shards(options_.num_shards);
  *meta.mutable_policy() = PolicyToProto(policy_);
  meta.set_t_delay(t_delay_);
  meta.set_lease_id_limit(lease_id_limit_);
  meta.set_routing(std::string(RoutingName(routing_)));
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
  const double duration =
      requested == 0.0 ? options_.default_lease_duration : requested;
  if (!(duration > 0.0 && duration <= options_.max_lease_duration)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lease_duration: must be in (0, ", TimeText(options_.max_lease_duration),
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
        field, ": ", TimeText(t), " is ", TimeText(t - now_),
        " s ahead of the shard's clock (", TimeText(now_), "); at most ",
        TimeText(options_.max_clock_skew), " s are allowed"));
  }
  return std::min(t, now_);
}

int32_t Shard::OwnerOf(absl::string_view host) const {
  return OwnerOfHost(host, routing_, static_cast<int32_t>(options_.num_shards));
}

absl::Status Shard::CheckOwner(absl::string_view host,
                               const char* field) const {
  const int32_t owner = OwnerOf(host);
  if (owner == static_cast<int32_t>(options_.shard_index)) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      field, ": host \"", host, "\" belongs to shard ", owner, " of ",
      options_.num_shards, " (by ", RoutingName(routing_), "), this is shard ",
      options_.shard_index));
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
  }
  batch_.DeleteUrl(pages_[page].id);
  EndLeaseAndHold(page);
  index_.Remove(page);
  pages_.Remove(page);
}

// ---------------------------------------------------------------- settings

absl::StatusOr<SetHostPolitenessResponse> Shard::SetHostPoliteness(
    const SetHostPolitenessRequest& req, double now) {
  if (absl::Status s = CheckBatchSize("hosts", req.hosts_size());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = BeginWrite(now); !s.ok()) return s;
  SetHostPolitenessResponse response;
  BatchResult* result = response.mutable_result();
  for (int i = 0; i < req.hosts_size(); ++i) {
    const HostPoliteness& h = req.hosts(i);
    auto reject = [&](const absl::Status& s) {
      AddRejection(i, s, result);
    };
    absl::StatusOr<std::string> name = NormalizeHost(h.host());
    if (!name.ok()) {
      reject(absl::InvalidArgumentError(
          absl::StrCat("host: ", name.status().message())));
      continue;
    }
    if (absl::Status s = CheckOwner(*name, "host"); !s.ok()) {
      reject(s);
      continue;
    }
    if (h.has_min_delay() &&
        !(h.min_delay() >= 0.0 && h.min_delay() <= options_.max_host_delay)) {
      reject(absl::InvalidArgumentError(
          absl::StrCat("min_delay: must be in [0, ", options_.max_host_delay,
                       "] seconds, got ", h.min_delay())));
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
    HostRecord record;
    record.set_host(*name);
    record.set_min_delay(p.min_delay);
    record.set_blocked_until(std::isfinite(p.blocked_until) ? p.blocked_until
                                                            : 0.0);
    batch_.PutHost(record);
    result->set_applied(result->applied() + 1);
  }
  if (absl::Status s = Commit(req.sync()); !s.ok()) return s;
  return response;
}

absl::StatusOr<SetPolicyResponse> Shard::SetPolicy(const SetPolicyRequest& req,
                                                   double now) {
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
      return absl::InvalidArgumentError(
          absl::StrCat("t_delay: must be in [0, ", options_.max_t_delay,
                       "] seconds, got ", req.t_delay()));
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
  s.set_routing(std::string(RoutingName(routing_)));
  s.set_time(now_);
  s.set_urls(pages_.size());
  s.set_hosts(hosts_.size());
  s.set_leases_in_flight(leases_.active());
  s.set_signals_per_second(signal_rate_.Rate(now_));
  s.set_picks_per_second(pick_rate_.Rate(now_));
  s.set_reports_per_second(report_rate_.Rate(now_));
  s.set_crawl_value_level(level_);
  *s.mutable_policy() = PolicyToProto(policy_);
  s.set_t_delay(t_delay_);
  EstimatorHealth* e = s.mutable_estimator();
  e->set_urls_learning(urls_learning_);
  e->set_rejected_fits(rejected_fits_);
  e->set_probe_leases_total(probes_.taken());
  e->set_probes_pending(probes_.size());
  e->set_mean_observed_crawls(
      urls_learning_ > 0
          ? static_cast<double>(observed_crawls_sum_) / urls_learning_
          : 0.0);
  s.set_signals_total(signals_total_);
  s.set_leases_total(leases_total_);
  s.set_reports_total(reports_total_);
  s.set_expired_leases_total(expired_leases_total_);
  s.set_released_leases_total(leases_released_total_);
  const SchedulingIndex::Stats& work = index_.stats();
  IndexWork* w = s.mutable_index();
  w->set_candidates(index_.candidates());
  w->set_valuations(work.evaluations);
  w->set_wakeups(work.wakeups);
  w->set_rebuilds(work.rebuilds);
  w->set_raises(work.raises);
  w->set_reserve_pulls(work.pulls);
  return s;
}

absl::Status Shard::Flush() { return store_->Flush(); }

size_t Shard::MemoryBytes() const {
  return index_.MemoryBytes() + pages_.MemoryBytes() + hosts_.MemoryBytes() +
         leases_.size() * 96 + leases_.holds() * 64;
}

}  // namespace shard
}  // namespace recrawl
