// Start-up: the URL records loaded, the journal replayed on top of them,
// and the state both gave handed to the index.
#include "shard/shard_recovery.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "cluster/url.h"
#include "cluster/url_id.h"
#include "shard/journal_format.h"
#include "shard/journal_reader.h"
#include "shard/learning_record.h"
#include "shard/signal_keys.h"
#include "shard/store/parallel_scan.h"

namespace recrawl {
namespace shard {
namespace {

// The prior of a record, with the defaults where a field is missing
// (records written by the shard always have all three).
policy::PageParams PriorOf(const ChangeModel& m, const policy::PageParams& defaults) {
  policy::PageParams p = defaults;
  if (m.has_change_rate()) p.change_rate = m.change_rate();
  if (m.has_recall()) p.recall = m.recall();
  if (m.has_false_rate()) p.false_rate = m.false_rate();
  return p;
}

// The host of a normalised URL's prefix "scheme://host[:port]" (host may
// be an IPv6 literal in brackets).
absl::string_view UrlHostOf(absl::string_view prefix) {
  const size_t scheme = prefix.find("://");
  if (scheme == absl::string_view::npos) return {};
  absl::string_view host = prefix.substr(scheme + 3);
  const size_t end = host.rfind(':');
  if (end != absl::string_view::npos && host.find(']', end) == absl::string_view::npos) {
    host = host.substr(0, end);  // a port, not a colon of an IPv6 literal
  }
  return host;
}

// Where a normalised URL's path begins: after "scheme://authority".
size_t PathBegin(absl::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == absl::string_view::npos) return 0;
  const size_t path = url.find('/', scheme + 3);
  return path == absl::string_view::npos ? url.size() : path;
}

}  // namespace

// A record as start-up needs it, decoded on a scanning thread
// (store/parallel_scan.h).
struct Shard::Recovery::LoadedUrl {
  cluster::UrlId id = 0;
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
  // PageTable::IsModelAsPrior(model, learning): the page keeps no learning
  // entry.
  bool learning_is_model = false;
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

absl::StatusOr<ScanStats> Shard::Recovery::LoadUrls() {
  last_id_.assign(std::max(shard_.options_.startup_threads, 1), std::nullopt);
  record_seq_.reserve(shard_.startup_.estimated_urls);
  absl::StatusOr<ScanStats> urls = ParallelScanUrls<LoadedUrl>(
      *shard_.store_, shard_.options_.startup_threads,
      [this](cluster::UrlId id, const UrlRecord& record, LoadedUrl* out) {
        out->id = id;
        DecodeRecord(record, out);
      },
      [this](int part, absl::Span<const LoadedUrl> urls) {
        // A URL's prefix is a random one of ~10^6 at 10^7 URLs: its probe
        // of the prefix table misses the cache. Asked for a few URLs
        // ahead, the misses overlap with the loading of the URLs between.
        constexpr size_t kAhead = 8;
        for (size_t i = 0; i < urls.size(); ++i) {
          if (i + kAhead < urls.size()) {
            const LoadedUrl& next = urls[i + kAhead];
            shard_.pages_.PrefetchPrefix(
                {absl::string_view(next.url).substr(0, next.path), next.prefix_hash});
          }
          LoadUrl(part, urls[i]);
        }
      });
  if (!urls.ok()) return urls.status();
  shard_.pages_.IndexAll();
  return urls;
}

// What LoadUrl needs of a record; values the shard would not accept from a
// client make it malformed. Thread-safe: reads only the options.
void Shard::Recovery::DecodeRecord(const UrlRecord& record, LoadedUrl* out) const {
  out->malformed = nullptr;
  out->url.assign(record.url());
  const policy::PageParams prior = PriorOf(record.prior(), shard_.Defaults());
  policy::PageParams model = prior;
  model.importance = record.importance();
  if (record.has_estimate()) model = PriorOf(record.estimate(), model);
  if (!shard_.IndexableModel(model, shard_.options_.max_rate) ||
      !(model.importance <= shard_.options_.max_importance) ||
      !shard_.IndexableModel(prior, shard_.options_.max_rate)) {
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
  } else if (absl::StatusOr<cluster::NormalizedUrl> n = cluster::NormalizeUrl(record.url());
             n.ok()) {
    const absl::string_view host = n->host();
    out->host.assign(host.data(), host.size());
  } else {
    out->malformed = "no politeness host, and the URL does not parse";
    return;
  }
  out->path = PathBegin(out->url);
  out->host_is_url_host = out->host == UrlHostOf(absl::string_view(out->url).substr(0, out->path));
  out->prefix_hash = StringInterner::HashOf(absl::string_view(out->url).substr(0, out->path));
  out->host_hash = StringInterner::HashOf(out->host);
  out->model = model;
  out->learning = LearningFromRecord(record.learning(), prior);
  out->learning_is_model = PageTable::IsModelAsPrior(model, out->learning);
  out->n_cis = static_cast<uint16_t>(std::min<int64_t>(record.signals_since_crawl(), kMaxSignals));
  out->failures = static_cast<uint8_t>(std::min<uint32_t>(record.consecutive_failures(), 0xff));
  out->has_digest = record.has_content_digest();
  out->digest =
      out->has_digest ? static_cast<uint32_t>(cluster::Fingerprint64(record.content_digest())) : 0;
  if (record.has_signal_filter()) {
    out->signal_filter = record.signal_filter();
    out->latest_signal = record.latest_signal();
  } else {
    // Format 1: the newest n_cis keys are those of the signals since the
    // last crawl (each counted signal appended one).
    out->signal_filter = 0;
    out->latest_signal = -1.0f;
    const int keys = record.recent_signal_keys_size();
    for (int k = std::max(0, keys - static_cast<int>(out->n_cis)); k < keys; ++k) {
      AddSignal(record.recent_signal_keys(k), &out->signal_filter);
    }
    if (out->n_cis > 0 && record.has_last_signal_time()) {
      out->latest_signal =
          std::max(LatestSignalOffset(record.last_signal_time() - out->last_crawl), 0.0f);
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
void Shard::Recovery::LoadUrl(int part, const LoadedUrl& u) {
  auto malformed = [this, &u](absl::string_view why) {
    ++shard_.startup_.malformed;
    if (shard_.startup_.errors.size() < ScanStats::kMaxErrors) {
      shard_.startup_.errors.push_back(absl::StrCat("urls/", u.url.substr(0, 64), ": ", why));
    }
  };
  if (u.malformed != nullptr) {
    malformed(u.malformed);
    return;
  }
  // A part's scan goes in key order, which is id order: an id not above the
  // previous one is a duplicate (or the store broke its order).
  std::optional<cluster::UrlId>& last_id = last_id_[part];
  if (last_id.has_value() && u.id <= *last_id) {
    malformed("duplicate id");
    return;
  }
  const PageId page = shard_.pages_.AddUnindexed(u.id);
  last_id = u.id;
  const absl::string_view url = u.url;
  uint32_t prefix = 0;
  if (!shard_.pages_.SetUrl(page, {url.substr(0, u.path), u.prefix_hash}, url.substr(u.path),
                            &prefix)) {
    shard_.pages_.Remove(page);
    malformed("URL text arena full");
    return;
  }
  // Most URLs are polite by their own host, which their prefix determines:
  // its id is kept per prefix, sparing a lookup (and a compare of names)
  // per URL.
  HostId host;
  if (u.host_is_url_host) {
    if (prefix_host_.size() <= prefix) {
      prefix_host_.resize(prefix + 1, kNoHost);
    }
    HostId& cached = prefix_host_[prefix];
    if (cached == kNoHost) cached = shard_.hosts_.Intern({u.host, u.host_hash});
    host = cached;
  } else {
    host = shard_.hosts_.Intern({u.host, u.host_hash});
  }
  PageSlot& slot = shard_.pages_[page];
  slot.SetModel(u.model);
  // After the model: the table keeps an entry only where the state is more
  // than the model as prior (the slot is new, so where it is the model,
  // there is nothing to set).
  if (!u.learning_is_model) shard_.pages_.SetLearning(page, u.learning);
  if (u.has_digest) shard_.pages_.SetDigest(page, u.digest);
  slot.n_cis = u.n_cis;
  // A record without signals since its crawl starts a known split by
  // source, which the journal's records then count.
  if (u.n_cis == 0) shard_.pages_.RestartSourceSignals(page);
  slot.failures = u.failures;
  slot.signal_filter = u.signal_filter;
  slot.latest_signal = u.latest_signal;
  if (record_seq_.size() <= page) record_seq_.resize(page + 1, 0);
  record_seq_[page] = u.signal_seq;
  max_record_seq_ = std::max(max_record_seq_, u.signal_seq);
  if (const uint32_t crawls = shard_.pages_.LearningCrawls(page); crawls > 0) {
    ++shard_.urls_learning_;
    shard_.observed_crawls_sum_ += crawls;
    if (shard_.options_.pool_host_priors) shard_.host_priors_.NotePage(host, page);
  }

  // The index keeps the page's host and last crawl for the shard; it hears
  // of the signals in IndexLoadedState, once the journal has given them
  // all.
  shard_.index_.Upsert(
      page, shard_.IndexView(host, shard_.RankingModel(host, u.model, u.learning.crawls > 0)), host,
      u.last_crawl);
  if (u.lease_id != 0 && std::isfinite(u.lease_deadline)) {
    // (Records of store format 2 and before; leases are journaled now.)
    shard_.leases_.Grant(u.lease_id, page, u.lease_holder, u.lease_deadline,
                         /*active=*/u.lease_deadline > shard_.now_);
  }
  if (u.retry_after > shard_.now_ && std::isfinite(u.retry_after) &&
      shard_.leases_.OfPage(page) == nullptr) {
    shard_.leases_.Hold(page, u.retry_after);
  }
  ++shard_.startup_.urls;
}

// The journal's entries on top of the records: a record applies to its URL
// if its entry is not older than the record's signal_seq (the record has
// the earlier ones, or they were before its last crawl, which also ended
// any lease granted before).
absl::Status Shard::Recovery::ReplayJournal() {
  // The pages of the current entry's records, in record order.
  std::vector<PageId> found;
  JournalReader reader(shard_.store_.get());
  absl::StatusOr<int64_t> entries = reader.ReadAll([&](uint64_t seq, absl::string_view entry) {
    // Into `found`, by the second pass below.
    size_t next_found = 0;
    auto signal = [&](const JournalSignal& s) {
      const PageId page = found[next_found++];
      if (page == kNoPage || seq < record_seq_[page]) return;
      PageSlot& slot = shard_.pages_[page];
      AddSignal(s.key, &slot.signal_filter);
      if (slot.n_cis < kMaxSignals) ++slot.n_cis;
      const double offset = s.time - shard_.LastCrawl(page);
      shard_.pages_.CountSourceSignal(page, s.source, offset, shard_.options_.joint_signal_window);
      if (offset > slot.latest_signal) {
        slot.latest_signal = LatestSignalOffset(offset);
      }
      shard_.MarkUnfolded(page, seq);
    };
    // A state record holds everything since the last crawl, so n_cis
    // only grows from what the record or earlier entries gave.
    auto state = [&](const JournalState& s) {
      const PageId page = found[next_found++];
      if (page == kNoPage || seq < record_seq_[page]) return;
      PageSlot& slot = shard_.pages_[page];
      slot.n_cis = std::max(slot.n_cis, s.n_cis);
      slot.signal_filter |= s.filter;
      slot.latest_signal = std::max(slot.latest_signal, s.latest);
      shard_.pages_.RestoreSourceSignals(page, s.split_known, s.split);
      shard_.MarkUnfolded(page, seq);
    };
    // A later grant replaces an earlier one (a URL has one lease at a
    // time); one past its deadline is kept inactive, as a record's was.
    // A hold from the record (a failed fetch) stays: the fetch was after
    // the grant, whose end follows in an 'E' record.
    auto lease = [&](const JournalLease& l) {
      const PageId page = found[next_found++];
      if (page == kNoPage || seq < record_seq_[page]) return;
      if (l.id == 0 || !std::isfinite(l.deadline)) {
        ++shard_.startup_.malformed;
        return;
      }
      shard_.leases_.Grant(l.id, page, std::string(l.holder), l.deadline,
                           /*active=*/l.deadline > shard_.now_);
      shard_.MarkUnfolded(page, seq);
    };
    auto lease_end = [&](const JournalLeaseEnd& e) {
      const PageId page = found[next_found++];
      if (page == kNoPage || seq < record_seq_[page]) return;
      const LeaseTable::Lease* lease = shard_.leases_.OfPage(page);
      if (lease != nullptr && lease->id == e.id) {
        shard_.leases_.Release(page);
      }
    };
    // An entry's URLs are random pages, each a few dependent cache
    // misses (the id table, the slot it points to, the record's
    // signal_seq, the index's page): in three passes over the entry the
    // misses of its records overlap instead of coming one after the
    // other. First the id table's lines, then each URL's page (looked up
    // in cache) with that page's lines, then the records applied to the
    // pages found, in the same order.
    JournalReader::ForEachUrl(entry, [&](cluster::UrlId url) { shard_.pages_.Prefetch(url); });
    found.clear();
    JournalReader::ForEachUrl(entry, [&](cluster::UrlId url) {
      const PageId page = shard_.pages_.Find(url);
      found.push_back(page);
      if (page == kNoPage) return;
      __builtin_prefetch(&shard_.pages_[page]);
      __builtin_prefetch(&record_seq_[page]);
      shard_.index_.Prefetch(page);
    });
    const bool whole = JournalReader::ForEachRecord(entry, {signal, state, lease, lease_end});
    if (!whole) ++shard_.startup_.malformed;
  });
  if (!entries.ok()) return entries.status();
  // The next entry follows the last one stored and every record's.
  uint64_t next_seq = std::max<uint64_t>(max_record_seq_, 1);
  if (!reader.empty()) next_seq = std::max(next_seq, reader.last_seq() + 1);
  shard_.journal_.Restore(next_seq, reader.empty() ? next_seq : reader.first_seq());
  shard_.startup_.journal_entries = *entries;
  return absl::OkStatus();
}

// The loaded pages' signal counts, as the replay left them, into the index
// (one call per page however many signals the journal gave it: those of the
// host's trusted sources when the split is known, as IngestSignals counts
// them), and their leases and holds.
void Shard::IndexLoadedState() {
  for (PageId page = 0; page < pages_.end(); ++page) {
    const PageSlot& slot = pages_[page];
    if (!slot.in_use) continue;
    if (const int64_t ranked = slot.n_cis > 0 ? RankedSignals(page, slot.n_cis) : 0; ranked > 0) {
      const double last_crawl = LastCrawl(page);
      const double latest =
          slot.latest_signal >= 0.0f ? LastSignalTime(slot, last_crawl) : last_crawl;
      index_.RecordSignals(page, latest, ranked);
    }
    const LeaseTable::Lease* lease = leases_.OfPage(page);
    if ((lease != nullptr && lease->active) || leases_.Held(page)) {
      index_.Lease(page);
    }
  }
}

}  // namespace shard
}  // namespace recrawl
