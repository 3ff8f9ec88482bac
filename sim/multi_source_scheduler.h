// Algorithm 1 of the main paper over pages with several signal sources: at
// every slot crawl argmax_i V_i, with V the multi-source crawl value
// (policy/multi_source_value.h) of what the policy believes about page i and
// of the signals as the policy sees them (SignalView). Beliefs are the true
// parameters (oracle) seen through the view, so the views compare what the
// per-source model buys over today's single (λ, ν).
//
// The argmax is exact and lazy: each page keeps its value at its last
// evaluation with the growth bound of ValueGrowth, V(t) <= v + slope·h +
// slope_rise·h²/2 (h the time since), capped at μ/Δ; a slot pops pages by
// bound and evaluates them until the best exact value is at least every
// remaining bound. Pages are re-evaluated at the first slot after a signal
// or a crawl. Not thread-safe.
#ifndef RECRAWL_SIM_MULTI_SOURCE_SCHEDULER_H_
#define RECRAWL_SIM_MULTI_SOURCE_SCHEDULER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/estimators.h"
#include "policy/multi_source_model.h"
#include "policy/source_change_rate_estimator.h"
#include "policy/source_trust_estimator.h"
#include "shard/learning.h"
#include "sim/metrics.h"
#include "sim/multi_source_world.h"

namespace recrawl {
namespace sim {

enum class SignalView {
  // GREEDY: no signals; the page changes at rate Δ.
  kNone,
  // Today's single (λ, ν) on the merged stream, one signal per signalling
  // instant: MultiSourceModel::Merged (the exact model of that stream).
  kMerged,
  // Only source 0 (the accurate one) with its own (λ_0, ν_0).
  kFirstSourceOnly,
  // Per-source trust (M2): single-source events weighted by w_s, a joint
  // event proves a change.
  kPerSource,
  // Per-source weights, but signals of one change from several sources are
  // not recognised as one event: each counts as a single-source signal (what
  // an index that cannot match them would do).
  kPerSourceUnmatched,
  // kPerSource with each host's (λ_s, ν_s) learned during the run by a
  // policy::SourceTrustEstimator pooled over the host's pages (Δ_i given),
  // starting from its prior and re-fitted after 10, 20, 40, 80, 160 and then
  // every 200 crawls of the host.
  kPerSourceLearned,
  // kPerSourceLearned with each page's Δ_i learned as well, from its own
  // crawl outcomes alone (policy::ChangeRateEstimator: LambdaCrawl's
  // smoothed Eq. 14, which starts at 2 ln 2 with no data and does not use
  // signals), the page's current estimate being the Δ_i its host's trust
  // estimator is given at each crawl. μ_i stays given.
  kPerSourceLearnedChangeRates,
  // The same with each page's Δ_i from the shard's per-page fit instead
  // (shard::Fit's estimate: App. E's joint likelihood of the outcomes and
  // the signal counts, each signalling instant one signal, from the prior
  // kJointFitPrior), as a shard gives its host trust.
  kPerSourceLearnedJointFit,
  // The same with each page's Δ_i by maximum likelihood of its intervals'
  // per-source signal counts and outcomes given its host's learned trust
  // (policy::SourceChangeRateEstimator, from the prior JointFitPrior()'s Δ
  // worth one observation): the page's half of the host's likelihood. The
  // estimate is made again at each crawl of the page, at its 2nd, 4th, 8th,
  // ... signal since its last crawl (the open interval's counts included,
  // as the shard refreshes its signal rate), and at each refit of its host.
  kPerSourceLearnedSourceFit,
  // One (λ, ν) built from the sources worth listening to: the page's
  // MultiSourceModel::TrustedSources(kTrustedMinRelativeWeight) and
  // MergedOf them, one signal per signalling instant among those sources;
  // the other sources' signals are ignored. What a shard that ranks by a
  // single (λ, ν) does with per-source trust.
  kTrusted,
  // kTrusted with each host's (λ_s, ν_s) learned as kPerSourceLearned learns
  // them (same estimator, prior and refit schedule); the trusted set is
  // recomputed at each refit. Signals count under the trusted set in force
  // when they arrive.
  kTrustedLearned,
  // kTrustedLearned with each page's Δ_i from the shard's per-page fit
  // (kPerSourceLearnedJointFit's shard::Fit from JointFitPrior()) of every
  // signalling instant, whichever sources signalled: what the shard does.
  kTrustedLearnedJointFit,
  // The same, the fit counting only the instants of the trusted sources,
  // the signals the page is ranked by.
  kTrustedLearnedRankedFit,
};

// The prior (Δ, λ, ν) of kPerSourceLearnedJointFit's per-page fits: the
// middle of the worlds' Δ ~ U[0, 1], and SourceTrustPrior's λ and ν
// (importance 1).
policy::PageParams JointFitPrior();

// The share of the best source's log-odds per signal a source needs to be
// trusted by kTrusted and kTrustedLearned.
inline constexpr double kTrustedMinRelativeWeight = 0.5;

struct MultiSourcePolicy {
  std::string name;
  SignalView view;
};

// GREEDY, GREEDY-NCIS-MERGED, GREEDY-NCIS-CDN-ONLY, GREEDY-NCIS-SOURCES,
// GREEDY-NCIS-SOURCES-UNMATCHED, GREEDY-NCIS-SOURCES-LEARNED,
// GREEDY-NCIS-SOURCES-LEARNED-DELTA, GREEDY-NCIS-SOURCES-LEARNED-FIT,
// GREEDY-NCIS-SOURCES-LEARNED-SOURCE-FIT, GREEDY-NCIS-TRUSTED,
// GREEDY-NCIS-TRUSTED-LEARNED, GREEDY-NCIS-TRUSTED-LEARNED-FIT,
// GREEDY-NCIS-TRUSTED-LEARNED-RANKED-FIT.
const std::vector<MultiSourcePolicy>& MultiSourcePolicies();

class MultiSourceScheduler {
 public:
  // Page i belongs to host i / pages_per_host (used by the learned views).
  // InvalidArgument if a page's parameters are invalid or pages_per_host < 1.
  static absl::StatusOr<std::unique_ptr<MultiSourceScheduler>> Create(
      const std::vector<policy::MultiSourceParams>& pages, SignalView view, int pages_per_host);

  // Signals at t (<= the next slot) from the sources in the bit set.
  void OnSignal(int page, double t, uint32_t sources);
  int Next(double t);
  // `changed`: the content differed from the previous crawl.
  void OnCrawl(int page, double t, bool changed);

  // The exact crawl value of `page` at t (>= its last signal and crawl)
  // under the policy's belief and view, computed afresh.
  double Value(int page, double t) const;

  // Exact values computed so far (for the work it takes).
  int64_t evaluations() const { return evaluations_; }

  // The bit set of the sources whose signals `page`'s view counts now (bit s
  // for source s).
  uint32_t counted_sources(int page) const { return counted_[page]; }
  // What the policy believes of `page` now.
  const policy::MultiSourceModel& belief(int page) const { return beliefs_[page]; }

 private:
  struct Page {
    policy::SourceSignals signals;  // as the view counts them
    // Per source, for the learner when the view merges them
    // (kTrustedLearned).
    policy::SourceSignals by_source;
    double last_crawl = 0.0;
    double value = 0.0, slope = 0.0, slope_rise = 0.0;
    double evaluated_at = 0.0;
    double ceiling = 0.0;
    bool dirty = true;
  };

  MultiSourceScheduler(std::vector<policy::MultiSourceModel> beliefs, std::vector<uint32_t> counted,
                       int num_sources, SignalView view, int pages_per_host);
  bool LearnsTrust() const;
  // kTrustedLearned and the views built on it.
  bool LearnsTrusted() const;
  // The views that learn Δ_i with shard::Fit (fits_).
  bool FitsLikeTheShard() const;
  void Learn(int page, double t, bool changed);
  // The views that learn Δ_i: the page's estimate after the crawl that ends
  // an interval of `tau` (nullopt: none this time).
  std::optional<double> LearnChangeRate(int page, double tau, bool changed);
  // kPerSourceLearnedSourceFit: `page`'s Δ̂ with `sources`, counting the
  // signals of its interval open at t unless `closed` (the crawl at t has
  // just added it).
  double SourceFitChangeRate(int page, double t, const std::vector<policy::SourceParams>& sources,
                             bool closed) const;
  // Sets `page`'s believed parameters (the ceiling of its value with them).
  void SetBelief(int page, policy::MultiSourceModel belief);
  // The same with only its change rate replaced.
  void SetChangeRate(int page, double change_rate);
  void Evaluate(int page, double t);
  double Bound(const Page& p, double t) const;

  std::vector<policy::MultiSourceModel> beliefs_;
  std::vector<uint32_t> counted_;  // per page, for kTrusted and kTrustedLearned
  int num_sources_;
  SignalView view_;
  std::vector<Page> pages_;
  std::vector<int> dirty_;
  std::vector<std::pair<double, int>> heap_;
  int pages_per_host_;
  std::vector<policy::SourceTrustEstimator> trust_;  // per host, when learning
  std::vector<int64_t> next_refit_;                  // per host
  // Per page, for kPerSourceLearnedChangeRates / kPerSourceLearnedJointFit /
  // kPerSourceLearnedSourceFit.
  std::vector<policy::ChangeRateEstimator> change_rates_;
  std::vector<shard::LearningState> fits_;
  std::vector<policy::SourceChangeRateEstimator> source_fits_;
  int64_t evaluations_ = 0;
};

// Runs `view`'s scheduler on the realisation and returns the crawl log (as
// sim/simulator.h's RunScheduler).
absl::StatusOr<CrawlLog> RunMultiSource(const MultiSourceInstance& instance,
                                        const MultiSourceRealization& world, SignalView view,
                                        int pages_per_host, int64_t* evaluations = nullptr);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_MULTI_SOURCE_SCHEDULER_H_
