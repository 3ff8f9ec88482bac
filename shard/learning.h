// Per-URL learning of the change model (Δ, λ, ν) from crawl outcomes and
// signal counts: the maximum-likelihood fit of main paper App. E, with the
// prior as pseudo-crawls, T_DELAY (App. C) taken off the signal time, and an
// optimistic bound for pages with few outcomes. A LearningState is 92 bytes,
// so that a shard can learn for every one of its millions of URLs in
// memory; a Fit takes a few microseconds. The derivation (moment summaries
// evaluated at sigma points, the priors, the optimism and its bound) is in
// docs/design.md, "Learning".
//
// The functions are pure and thread-safe; PriorRanking is not thread-safe.
#ifndef RECRAWL_SHARD_LEARNING_H_
#define RECRAWL_SHARD_LEARNING_H_

#include <cstdint>

#include "policy/page_model.h"

namespace recrawl {
namespace shard {

struct LearningOptions {
  // How many crawls the prior is worth in the likelihood of the change
  // side, α and αβ, which only crawl outcomes inform (0: pure maximum
  // likelihood, for tests; the fit is then only bounded by the limits
  // below). 3 rather than Kolobov et al.'s one smoothing step: with the
  // optimism below, a page's first outcomes moved it too far
  // (docs/results.md, "Learning").
  double prior_weight = 3.0;
  // How many mean crawl intervals the prior's signal rate γ₀ is worth in γ̂
  // (SignalRate), which every signal informs (0: the signals alone). Equal
  // to prior_weight, the prior counts as one number of crawls for both.
  double signal_prior_weight = 3.0;
  // Largest αβ = log(γ/ν) (ν/γ ≥ e^{−30}): ν = 0 is a limit the MLE can
  // only approach.
  double max_log_signal_factor = 30.0;
  // Bounds of α, per time unit.
  double min_alpha = 1e-15;
  double max_alpha = 1e9;
  // c of the optimistic bound: how far (in log-likelihood) the ranked model
  // may lie from the fit with no outcome; c / (1 + n) after n outcomes.
  // 0: rank by the fit.
  double optimism = 2.0;
  // The ranked model's θ is at least this share s of θ̂ (docs/design.md,
  // "Learning"). Where the data or the prior say little (a prior whose
  // pseudo-crawls rarely see a change), the bound would send α towards 0,
  // and a page's crawl value μτ·g(Δτ) ~ μΔτ²/2 at the τ it is weighed at
  // with it: "optimism" that never crawls it. The priors and data of
  // docs/results.md stop near 0.2.
  double min_optimism_scale = 0.1;
  // Probes (shard/probe_queue.h): a page whose first crawls, up to this
  // many, all found a change is crawled once more soon after, at
  // probe_delay_scale / Δ*. 0: no probes.
  int probe_crawls = 5;
  double probe_delay_scale = 1.0;
};

// The learning state of one URL. Floats: the fit needs a few digits, and
// memory is per URL.
struct LearningState {
  // The prior (Δ₀, λ₀, ν₀).
  float prior_change_rate = 0.0f;
  float prior_recall = 0.0f;
  float prior_false_rate = 0.0f;
  // Σ τ and Σ n over unchanged crawls.
  float unchanged_tau = 0.0f;
  float unchanged_signals = 0.0f;
  // Σ n and Σ max(τ − T_DELAY, 0) over all crawls, for γ̂.
  float signals = 0.0f;
  float signal_time = 0.0f;
  // Changed crawls by their signal count n = 0, 1, 2: count, mean of
  // u = log τ, Σ (u − ū)².
  struct Summary {
    float count = 0.0f;
    float mean_u = 0.0f;
    float m2_u = 0.0f;
  };
  Summary changed[3];
  // Changed crawls with n >= 3: also the mean of n and the co-moments.
  Summary many;
  float many_mean_n = 0.0f;
  float many_m2_n = 0.0f;
  float many_c_un = 0.0f;
  // Crawl outcomes learnt from.
  uint32_t crawls = 0;
};

// The state of a URL with only its prior.
LearningState InitLearning(const policy::PageParams& prior);

// Replaces the prior, keeping what the crawls taught.
void SetPrior(const policy::PageParams& prior, LearningState* state);
policy::PageParams Prior(const LearningState& state);

// Adds one crawl outcome: τ_elap since the previous successful crawl, n_cis
// signals counted meanwhile, changed or not; t_delay as the shard drops
// signals. Returns false, leaving `state` as it was, for inputs the model
// cannot hold: a non-finite or negative τ or n, or a change over τ = 0
// without signals (probability 0).
bool LearnFromCrawl(double tau, int64_t n_cis, bool changed, double t_delay, LearningState* state);

struct LearnedModel {
  // (Δ, λ, ν) with the given importance to rank by: `estimate` made
  // optimistic (LearningOptions::optimism), equal to it at optimism 0.
  policy::PageParams params;
  // The penalised maximum-likelihood fit (App. E with the prior).
  policy::PageParams estimate;
  double alpha = 0.0;
  double log_signal_factor = 0.0;  // αβ
  double signal_rate = 0.0;        // γ
  // False if the fit did not converge to finite values (then `params` is
  // the prior).
  bool ok = false;
};

// Maximises prior + likelihood over α ∈ [min_alpha, max_alpha],
// αβ ∈ [0, max_log_signal_factor] by projected Newton steps, then finds the
// optimistic bound by bisection. A few µs.
LearnedModel Fit(const LearningState& state, double importance, const LearningOptions& options);

// γ̂, the signal rate the fit uses (prior pseudo-intervals included), with
// an open interval added: `open_signals` counted over `open_time` since the
// last crawl (T_DELAY already taken off). Signals arrive whether or not a
// page is crawled, so they say how often it is signalled long before its
// crawls say how often it changes.
double SignalRate(const LearningState& state, double open_signals, double open_time,
                  const LearningOptions& options);

// Whether the n-th signal since a crawl re-estimates a page's signal rate
// from its open interval: at n = 2, 4, 8, ..., so O(log n) times an
// interval.
inline bool SignalCountRefreshesRate(int64_t n) { return n >= 2 && (n & (n - 1)) == 0; }

// `model` with signal rate γ = λΔ + ν set to `signal_rate`, keeping what the
// crawl outcomes fit, α = (1 − λ)Δ and αβ = log(γ/ν) (App. E): λΔ and ν
// scale with γ. A model without signals (γ = 0) is returned as it is.
policy::PageParams WithSignalRate(const policy::PageParams& model, double signal_rate);

// The model a page that was never crawled is ranked by: its prior made
// optimistic as for a page with no outcome, Fit(InitLearning(prior)).params.
// Ranking such a page by the bare prior would let no page the prior
// undervalues be crawled to find out. A fit takes microseconds and a shard
// loads millions of URLs that mostly share its default prior, so the last
// prior's answer is kept. Not thread-safe.
class PriorRanking {
 public:
  explicit PriorRanking(const LearningOptions& options) : options_(options) {}

  // (Δ, λ, ν) to rank by, with prior.importance.
  policy::PageParams Ranked(const policy::PageParams& prior);

  // Fits made (priors whose answer was not kept), for tests.
  uint64_t fits() const { return fits_; }

 private:
  LearningOptions options_;
  uint64_t fits_ = 0;
  bool cached_ = false;
  policy::PageParams prior_;   // the last prior asked for
  policy::PageParams ranked_;  // its answer
};

// Whether the index should be told about `learnt` while it ranks with
// `current`: Δ, ν or γ changed by more than `threshold` relative to the
// larger of the two, or λ by more than `threshold` absolute.
bool ChangedMeaningfully(const policy::PageParams& current, const policy::PageParams& learnt,
                         double threshold);

// Whether a crawl whose outcome made `state` (n_cis signals counted before
// it) must re-rank its page by `learnt` while the index ranks it by
// `current`: always after a first outcome, which replaces the optimistic
// prior, and after an interval whose signal rate was refreshed
// (SignalCountRefreshesRate), which the crawl has closed; otherwise when
// the model changed meaningfully.
bool RerankAfterCrawl(const LearningState& state, int64_t n_cis, const policy::PageParams& current,
                      const policy::PageParams& learnt, double threshold);

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_LEARNING_H_
