// Per politeness host, how far each signal source can be trusted: the
// recall λ_s and false-signal rate ν_s of sitemaps, CDN purges, IndexNow,
// WebSub and other signals, learnt from the crawls of the host's pages
// pooled (docs/multi_source_model.md, "Learning per-source trust", (M10);
// policy::SourceTrustEstimator). A new page of a known host thereby starts
// from what its host has shown.
//
// Each crawl interval of a page whose signals since its previous crawl are
// known by source (PageTable::SourceSplit) adds (Δ_i, τ, counts, changed)
// to its host's estimator, Δ_i the page's own estimate. Signals are taken
// as single-source events: the shard does not match one change's signals
// from several sources (joint events), which (M4) says overstates
// freshness when two sources often signal the same change.
//
// State: 2.5–7 KB per host that has learnt (one to three times
// max_changed_intervals changed intervals kept, 36 bytes each, plus sums);
// hosts that never learnt cost nothing. The bound trades accuracy for
// memory (policy/source_trust_estimator.h gives the error measured); at
// 10^5 learning hosts the default costs 0.25–0.7 GB. A fit (BFGS over the five
// sources) takes up to a few ms and is made only when asked (Estimate), then kept until the host
// learns more.
//
// Persistence: the caller writes a host's statistics (ToRecord) into its
// HostRecord when ShouldPersist says so after a Learn — at the host's 1st,
// 2nd, 4th, 8th interval and every 16th after — and every host learnt since
// its last write at a graceful stop (TakeUnwritten). A crash loses at most
// the host's last 15 intervals, which only delays what it learns.
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
  // change rate Δ_i per second, its signals by source, whether it changed.
  // InvalidArgument (naming the field) for what the estimator rejects; the
  // host is then unchanged.
  absl::Status Learn(HostId host, double change_rate, double tau, const SourceCounts& counts,
                     bool changed);

  // Whether the host's record should be written now (see the file comment).
  bool ShouldPersist(HostId host) const;
  // Marks the host's statistics as written.
  void MarkWritten(HostId host);
  // Hosts learnt since their last write, marked as written.
  std::vector<HostId> TakeUnwritten();

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
  };

  policy::SourceTrustPrior prior_;
  size_t max_changed_;
  absl::flat_hash_map<HostId, Host> hosts_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_HOST_TRUST_H_
