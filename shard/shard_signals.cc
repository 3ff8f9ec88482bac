// Change-indicating signals: the shard's hottest path. Per signal: normalise
// the URL (unless it came in normal form), find its page, drop it if stale
// (main paper App. C) or a duplicate, else count it in n_cis (the index
// moves the page's due time earlier by β) and add it to the batch's journal
// entry (journal_writer.h). No reads, one RocksDB record per batch.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "cluster/batch_result.h"
#include "cluster/url_id.h"
#include "shard/shard.h"
#include "shard/signal_keys.h"

namespace recrawl {
namespace shard {

absl::StatusOr<SignalBatchAck> Shard::IngestSignals(const SignalBatch& batch, double now) {
  if (absl::Status s = CheckBatchSize("signals", batch.signals_size()); !s.ok()) {
    return s;
  }
  if (absl::Status s = BeginWrite(now); !s.ok()) return s;
  SignalBatchAck ack;
  ack.set_sequence(batch.sequence());
  BatchResult* result = ack.mutable_result();
  uint32_t counted = 0, registered = 0, duplicate = 0, stale = 0, unknown = 0;
  // The batch's lookups go in passes: their URL ids taken and their table
  // lines loaded, then their pages found and loaded, then the signals
  // counted. A batch's pages are spread over the whole table, and a page
  // looked up or updated one after another waits for each of its cache
  // misses in turn; this way a batch's misses overlap.
  signal_lookups_.clear();
  signal_lookups_.resize(batch.signals_size());
  for (int i = 0; i < batch.signals_size(); ++i) {
    const std::string& url = batch.signals(i).url();
    SignalLookup& lookup = signal_lookups_[i];
    lookup.normal_form = cluster::NormalFormHost(url, options_.url_limits).has_value();
    if (lookup.normal_form) {
      lookup.id = cluster::UrlIdOf(url);
    } else {
      lookup.url = cluster::NormalizeUrl(url, options_.url_limits);
      if (!lookup.url.ok()) continue;
      lookup.id = cluster::UrlIdOf(lookup.url->spec());
    }
    pages_.Prefetch(lookup.id);
  }
  for (SignalLookup& lookup : signal_lookups_) {
    if (!lookup.has_id()) continue;
    lookup.page = pages_.Find(lookup.id);
    if (lookup.page == kNoPage) continue;
    __builtin_prefetch(&pages_[lookup.page]);
    index_.Prefetch(lookup.page);
  }
  for (int i = 0; i < batch.signals_size(); ++i) {
    const Signal& signal = batch.signals(i);
    SignalLookup& lookup = signal_lookups_[i];
    if (!lookup.has_id()) {
      cluster::AddRejection(i, lookup.url.status(), result);
      continue;
    }
    absl::StatusOr<double> time = ItemTime(signal.time(), "time");
    if (!time.ok()) {
      cluster::AddRejection(i, time.status(), result);
      continue;
    }
    const double t = *time;
    // A delivery is known by the time its sender gave, not by `t`, which is
    // clamped to the shard's clock when a little ahead: a redelivery comes
    // later and would be clamped to another time (counted twice, seen
    // after a coordinator restart). Unstamped signals take the clock's time,
    // which is why PingClient stamps them. (The journal keeps `t`: after a
    // shard restart a redelivery of a signal stamped ahead of the clock can
    // still count again.)
    const double key_time = signal.time() != 0.0 ? signal.time() : t;
    if (!SignalSource_IsValid(signal.source())) {
      cluster::AddRejection(
          i, absl::InvalidArgumentError(absl::StrCat("source: unknown value ", signal.source())),
          result);
      continue;
    }
    const SignalSource source = signal.source();
    const cluster::UrlId id = lookup.id;
    const uint64_t key = SignalKey(id, key_time, source);
    // A URL the batch registered after the lookups is found now.
    const PageId page = lookup.page != kNoPage ? lookup.page : pages_.Find(id);

    if (page == kNoPage) {
      if (!options_.register_unknown_urls) {
        ++unknown;
        ack.add_unknown_indexes(static_cast<uint32_t>(i));
        continue;
      }
      // A URL that came in normal form is normalised only to be registered.
      if (lookup.normal_form) lookup.url = cluster::NormalizeUrl(signal.url(), options_.url_limits);
      const absl::StatusOr<cluster::NormalizedUrl>& url = lookup.url;
      if (absl::Status s = CheckOwner(url->host(), "url"); !s.ok()) {
        cluster::AddRejection(i, s, result);
        continue;
      }
      // Registered as if it had been crawled at the signal's time, with the
      // signal counted: a page nobody has crawled yet ranks by its prior.
      // The record starts at this batch's journal entry, which holds the
      // signal.
      policy::PageParams model = Defaults();
      model.importance = options_.default_importance;
      NewPage added;
      added.id = id;
      added.host = std::string(url->host());
      added.url = *std::move(lookup.url);  // not read again
      added.model = model;
      added.last_crawl = t;
      const PageId created = AddPage(added);
      if (created == kNoPage) {
        cluster::AddRejection(
            i, absl::ResourceExhaustedError("url: the shard's URL text arena is full (4 GiB)"),
            result);
        continue;
      }
      batch_.PutUrl(NewRecord(added));
      PageSlot& slot = pages_[created];
      slot.n_cis = 1;
      slot.latest_signal = 0.0f;
      AddSignal(key, &slot.signal_filter);
      index_.RecordSignal(created, t);
      journal_.AddSignal({id, t, key, static_cast<int8_t>(TrustSourceIndex(source))});
      MarkUnfolded(created, journal_.next_seq());
      ++registered;
      continue;
    }

    PageSlot& slot = pages_[page];
    // Signals from before the last crawl, or within T_DELAY after it, are
    // about changes the crawl already saw (App. C).
    const PageView indexed = Indexed(page);
    const double last_crawl = indexed.last_crawl;
    if (t < last_crawl + t_delay_) {
      ++stale;
      continue;
    }
    const double offset = key_time - last_crawl;
    if (offset <= slot.latest_signal && MayContainSignal(slot.signal_filter, key)) {
      ++duplicate;
      continue;
    }
    AddSignal(key, &slot.signal_filter);
    if (slot.n_cis < kMaxSignals) ++slot.n_cis;
    const int source_index = TrustSourceIndex(source);
    // Before latest_signal takes it in: matched against the latest instant.
    const uint8_t joined =
        pages_.CountSourceSignal(page, source_index, offset, options_.joint_signal_window);
    if (offset > slot.latest_signal) {
      slot.latest_signal = LatestSignalOffset(offset);
    }
    // A source the host's crawls showed not worth listening to counts for
    // learning, not in ranking.
    const bool trusted = trust_.Trusted(indexed.host, source_index);
    bool ranked = trusted;
    if (joined != 0 && trust_.TrustedModel(indexed.host)) {
      // A joint event counts once in ranking (TrustedSignals): the instant
      // was counted already unless it was a single event of a source not
      // trusted. Two sources signalling one instant prove a change ((M2)),
      // trusted or not.
      ranked =
          __builtin_popcount(joined) == 1 && !trust_.Trusted(indexed.host, __builtin_ctz(joined));
    }
    if (ranked) index_.RecordSignal(page, t);
    if (trusted && !trust_.TrustedModel(indexed.host) && SignalCountRefreshesRate(slot.n_cis)) {
      RankBySignalRate(page, slot, indexed, t);
    }
    journal_.AddSignal({id, t, key, static_cast<int8_t>(source_index)});
    MarkUnfolded(page, journal_.next_seq());
    ++counted;
  }
  FoldJournal();  // writes the entry
  ack.set_counted(counted);
  ack.set_registered(registered);
  ack.set_duplicate(duplicate);
  ack.set_stale(stale);
  ack.set_unknown(unknown);
  result->set_applied(counted + registered);
  signals_total_ += counted + registered;
  signal_rate_.Add(now_, counted + registered);
  if (absl::Status s = Commit(batch.sync()); !s.ok()) return s;
  return ack;
}

void Shard::RankBySignalRate(PageId page, const PageSlot& slot, const PageView& indexed, double t) {
  const double last_crawl = indexed.last_crawl;
  const LearningState learning = pages_.Learning(page);
  // Signals within T_DELAY after the crawl were dropped, as in the crawls'
  // intervals (LearnFromCrawl).
  const double open = std::max(t - last_crawl - t_delay_, 0.0);
  const std::optional<double> pooled =
      options_.pool_host_priors ? host_priors_.SignalRate(indexed.host, learning, slot.n_cis, open)
                                : std::nullopt;
  const double rate =
      pooled.has_value() ? *pooled : SignalRate(learning, slot.n_cis, open, options_.learning);
  const policy::PageParams model{slot.importance, slot.change_rate, slot.recall, slot.false_rate};
  const bool learnt = learning.crawls > 0;
  policy::PageParams ranked;
  if (!learnt && RanksByOwnPriorFit(indexed.host, model, indexed.params)) {
    // The index holds the prior's fit at an earlier signal rate, and
    // WithSignalRate keeps what it fitted (α and αβ): rescaling it spares a
    // fit per refresh (the signal path's largest cost), to float precision.
    ranked = WithSignalRate(indexed.params, rate);
    ranked.importance = model.importance;
  } else {
    ranked = WithSignalRate(RankingModel(indexed.host, model, learnt), rate);
  }
  if (!IndexableModel(ranked, options_.max_rate)) return;
  const policy::PageParams view = IndexView(indexed.host, ranked);
  if (!ChangedMeaningfully(indexed.params, view, options_.push_threshold)) {
    return;  // spares the index a re-key
  }
  index_.Upsert(page, view, indexed.host, last_crawl);
}

bool Shard::RanksByOwnPriorFit(HostId host, const policy::PageParams& model,
                               const policy::PageParams& indexed) const {
  // A default prior may rank by its host's pooled prior instead, and a host
  // that learnt trust may have had its (λ, ν) swapped in (IndexView); a
  // view without signals (negligible precision) keeps no rate to rescale.
  if (host_priors_.IsDefault(model) || trust_.Has(host)) return false;
  const double signal_rate = indexed.recall * indexed.change_rate + indexed.false_rate;
  return signal_rate > 0.0 && std::isfinite(signal_rate);
}

int64_t Shard::RankedSignals(PageId page, int64_t n_cis) const {
  const HostId host = Indexed(page).host;
  IntervalSignals split;
  if (!trust_.TrustedModel(host) || !pages_.SourceSplit(page, n_cis, &split)) return n_cis;
  return TrustedSignals(host, split);
}

int64_t Shard::TrustedSignals(HostId host, const IntervalSignals& split) const {
  // The merged stream of the trusted sources counts a change once, however
  // many of them signalled it. A joint event counts as one of its events
  // whichever sources took part (the split does not keep them): two sources
  // at one instant prove a change ((M2)).
  int64_t ranked = split.joint;
  for (int s = 0; s < kTrustSources; ++s) {
    if (trust_.Trusted(host, s)) ranked += split.single[s];
  }
  return ranked;
}

void Shard::MarkUnfolded(PageId page, uint64_t seq) {
  PageSlot& slot = pages_[page];
  if (slot.unfolded) return;
  slot.unfolded = true;
  journal_.AddUnfolded(seq, page);
}

double Shard::LastSignalTime(const PageSlot& slot, double last_crawl) const {
  if (slot.latest_signal < 0.0f) return -1.0;
  return std::min(last_crawl + slot.latest_signal, now_);
}

// A record's signal state as of the next journal entry: what a crawl
// writes.
void Shard::SignalStatePatch(const PageSlot& slot, double last_crawl, UrlRecord* patch) const {
  patch->set_signals_since_crawl(slot.n_cis);
  patch->set_signal_filter(slot.signal_filter);
  patch->set_latest_signal(slot.latest_signal);
  if (slot.latest_signal >= 0.0f) {
    patch->set_last_signal_time(LastSignalTime(slot, last_crawl));
  }
  patch->set_signal_seq(journal_.next_seq());
}

// Pages whose oldest needed entry left the window and that were not crawled
// since get their whole signal and lease state written again into this
// entry.
void Shard::FoldJournal() {
  journal_.WriteEntry(
      &batch_,
      [this](PageId page) {
        const PageSlot& slot = pages_[page];
        return slot.in_use && slot.unfolded;
      },
      [this](PageId page) {
        const PageSlot& slot = pages_[page];
        JournalState state{slot.id, slot.n_cis, slot.signal_filter, slot.latest_signal};
        state.split_known = pages_.SignalSplitOf(page, &state.split);
        journal_.AddState(state);
        // Its lease too, active or not (a late report may still name it).
        if (const LeaseTable::Lease* lease = leases_.OfPage(page); lease != nullptr) {
          journal_.AddLease({slot.id, lease->id, lease->deadline, lease->holder});
        }
      });
}

}  // namespace shard
}  // namespace recrawl
