// Per politeness host, how far each signal source can be trusted: the
// recall λ_s and false-signal rate ν_s of sitemaps, CDN purges, IndexNow,
// WebSub and other signals, learnt from the crawls of the host's pages
// pooled (docs/multi_source_model.md, "Learning per-source trust", (M10);
// policy::SourceTrustEstimator). A new page of a known host thereby starts
// from what its host has shown.
//
// Each crawl interval of a page whose signals since its previous crawl are
// known by source (PageTable::SourceSplit) adds (Δ_i, τ, counts, changed)
// to its host's estimator, Δ_i the page's own estimate. Signals of two
// sources or more at one instant (within the shard's joint_signal_window)
// are one joint event (PageTable::CountSourceSignal); unmatched, each
// would count as its source's own, which (M4) says overstates freshness
// and learns a source whose signals mostly come with another's as noise.
//
// A host learns once two or more sources have signalled in its pages'
// intervals, from the interval that brings the second one on: with one
// source there is nothing to choose between (ShouldRefit), and most hosts
// send one kind of signal or none. Until then it costs a byte, in memory
// only: a restart starts the host's sources seen over.
//
// State: 2.5–7 KB per host that learns (one to three times
// max_changed_intervals changed intervals kept, 36 bytes each, plus sums).
// The bound trades accuracy for memory (policy/source_trust_estimator.h
// gives the error measured); at 10^5 learning hosts the default costs
// 0.25–0.7 GB. A fit (BFGS over the five
// sources) takes up to a few ms and is made only when asked (Estimate), then kept until the host
// learns more.
//
// Ranking (the trusted sources). A host's pages are ranked as the paper
// ranks a page, by one (λ, ν), and by default from all their signals. Once
// a host where two or more sources have signalled has learnt from 64
// intervals, and again at 128, 256, ... and every 65,536 after 65,536
// (ShouldRefit), Refit fits it and picks the sources worth listening to,
// policy::MultiSourceModel::TrustedSources at the host's mean change rate.
// When that leaves out a source that has signalled, the host's pages are
// ranked by the merged stream of the trusted ones (MergedOf: λ, ν of the
// host; Δ stays each page's own) and the others' signals do not count in
// ranking (Trusted), though they still count for learning. The
// simulator's measurement of this choice is in docs/results.md
// ("Per-source trust").
//
// Persistence: the caller writes a host's statistics (ToRecord) into its
// HostRecord when ShouldPersist says so after a Learn — at the host's 1st,
// 2nd, 4th, ..., 256th interval and every 256th after, so that a record of
// a few KB costs a crawl at most ~30 bytes of writes — and every host
// learnt since its last write at a graceful stop (TakeUnwritten), and when
// its trusted sources are re-chosen. A crash loses at most the host's last
// 255 intervals, which only delays what it learns.
//
// Not thread-safe (the shard serialises its calls).
#ifndef RECRAWL_SHARD_HOST_TRUST_H_
#define RECRAWL_SHARD_HOST_TRUST_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "policy/source_trust_estimator.h"
#include "shard/index/crawl_index.h"
#include "shard/store/records.pb.h"
#include "shard/trust_sources.h"

namespace recrawl {
namespace shard {

class HostTrustTable {
 public:
  // `prior`: what a source is believed before any crawl (per second).
  explicit HostTrustTable(const policy::SourceTrustPrior& prior,
                          size_t max_changed_intervals = kDefaultMaxChangedIntervals);

  static constexpr size_t kDefaultMaxChangedIntervals = 64;

  // Adds one crawl interval of a page of `host`: τ seconds, the page's
  // change rate Δ_i per second, its single-source events by source and its
  // joint events, whether it changed. A host where fewer than two sources
  // have signalled only notes the interval's sources (see the file
  // comment); a joint event is two sources. InvalidArgument (naming the
  // field) for what the estimator rejects (among them an unchanged
  // interval with a joint event, which proves a change); the host is then
  // unchanged.
  absl::Status Learn(HostId host, double change_rate, double tau, const IntervalSignals& signals,
                     bool changed);

  // Whether the host's record should be written now (see the file comment).
  bool ShouldPersist(HostId host) const;
  // Marks the host's statistics as written.
  void MarkWritten(HostId host);
  // Hosts learnt since their last write, marked as written.
  std::vector<HostId> TakeUnwritten();

  // Whether the host's trusted sources should be re-chosen now (after a
  // Learn; see the file comment).
  bool ShouldRefit(HostId host) const;
  // Fits the host and chooses its trusted sources: TrustedSources with
  // `min_relative_weight` (in (0, 1]; 0 trusts every source). Returns
  // whether the host's ranking (the trusted sources or their λ, ν)
  // changed. A fit takes up to a few ms.
  bool Refit(HostId host, double min_relative_weight);
  // Whether the signals of `source` (TrustSourceIndex) count in ranking the
  // host's pages: true for every source of a host without a choice.
  bool Trusted(HostId host, int source) const {
    return host >= masks_.size() || ((masks_[host] >> source) & 1) != 0;
  }
  // The (λ, ν) the host's pages are ranked with, for a host whose trusted
  // sources leave one out; false otherwise.
  bool TrustedModel(HostId host, double* recall, double* false_rate) const;
  bool TrustedModel(HostId host) const {
    double recall, false_rate;
    return TrustedModel(host, &recall, &false_rate);
  }

  bool Has(HostId host) const { return hosts_.contains(host); }
  // Σ of the source's signals over the host's intervals (0 for a host that
  // has not learnt).
  double Signals(HostId host, int source) const;
  size_t size() const { return hosts_.size(); }

  // The host's fitted (λ_s, ν_s), in TrustSourceIndex order, with the
  // crawls behind them; nullopt for a host that has not learnt. Fits on
  // the first call after the host learnt more.
  std::optional<policy::SourceTrustEstimate> Estimate(HostId host);

  // The host's statistics for its HostRecord; false for a host that has not
  // learnt.
  bool ToRecord(HostId host, SourceTrustRecord* record) const;
  // Restores a host's statistics from its record (start-up). InvalidArgument
  // naming the field for an inconsistent record; the host is then left as
  // it was.
  absl::Status Restore(HostId host, const SourceTrustRecord& record);

  size_t MemoryBytes() const;

 private:
  struct Host {
    explicit Host(policy::SourceTrustEstimator e) : estimator(std::move(e)) {}
    policy::SourceTrustEstimator estimator;
    int64_t written_crawls = 0;                      // num_crawls at the last write
    std::optional<policy::SourceTrustEstimate> fit;  // at fit_crawls
    int64_t fit_crawls = -1;
    // The ranking choice (Refit): trusted sources (0: all) and the merged
    // stream's (λ, ν), chosen after refit_crawls intervals.
    uint8_t trusted_mask = 0;
    double trusted_recall = 0.0;
    double trusted_false_rate = 0.0;
    int64_t refit_crawls = 0;
  };
  void SetMask(HostId host, uint8_t mask);

  policy::SourceTrustPrior prior_;
  size_t max_changed_;
  absl::flat_hash_map<HostId, Host> hosts_;
  // Learn's argument, kept so that a crawl allocates nothing for it.
  policy::SourceSignals scratch_{std::vector<int64_t>(kTrustSources, 0), 0};
  // Per HostId, the trusted sources' bits of hosts with a choice, all bits
  // otherwise (a byte a host: read for every signal).
  std::vector<uint8_t> masks_;
  // Per HostId, the sources that have signalled in the intervals of a host
  // that learns nothing yet (bit s for source s).
  std::vector<uint8_t> signalled_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_HOST_TRUST_H_
