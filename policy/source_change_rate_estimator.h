// A page's change rate Δ_i given its host's per-source trust (λ_s, ν_s), by
// maximum likelihood of the page's own crawl intervals under the model of
// multi_source_model.h (docs/multi_source_model.md, "Learning each page's
// change rate"). It is the page's half of SourceTrustEstimator's likelihood
// (source_trust_estimator.h), maximised over Δ with the sources fixed. With
// a = Π(1 − λ_r), k_s = λ_s Π_{r≠s}(1 − λ_r), j = 1 − a − Σ k_s:
//
//   ℓ(Δ) = Σ_s N_s log(Δ k_s + ν_s) + N_J log(Δ j) − Δ (1 − a) T   (counts)
//          − Δ a T_0 − Σ_s N0_s log1p(Δ k_s / ν_s)                   (unchanged)
//          + Σ_{changed, n_J = 0} log(1 − e^{−g_i(Δ)})                (changed)
//          + w log Δ − w Δ / Δ_0                                      (prior)
//
// over every interval: T = Σ τ, N_s = Σ n_s, N_J = Σ n_J; over the unchanged
// ones T_0 and N0_s; g_i(Δ) = Δ a τ_i + Σ_s n_is log1p(Δ k_s / ν_s) is minus
// the log of (M2)'s freshness. The prior is a Gamma with mode Δ_0 worth w
// observations, so the estimate is finite from the first crawl.
//
// Why not the outcomes alone (ChangeRateEstimator, LambdaCrawl's Eq. 14):
// a crawler that trusts a source comes soon after its signals and finds a
// change far more often than an interval of that length would without
// one; a fit that ignores the signals reads that as a high change rate.
// The likelihood above conditions each outcome on the signals seen, and as
// the crawl times depend only on what was observed, it holds whatever the
// crawl policy is.
//
// ℓ is concave in Δ (each source's counts and unchanged terms add up to
// (N_s − N0_s) log1p(Δ k_s/ν_s) plus a constant, and log(1 − e^{−g}) of a
// concave increasing g is concave), so its maximum is the one root of the
// score, found by Newton's method inside a bracket.
//
// State: the sums above and, for each changed interval without a joint
// event, τ and the counts (float): O(changed intervals), meant for the
// simulator. A source with λ_s > 0 and ν_s = 0 is taken with ν_s =
// kMinFalseRate. Not thread-safe.
#ifndef RECRAWL_POLICY_SOURCE_CHANGE_RATE_ESTIMATOR_H_
#define RECRAWL_POLICY_SOURCE_CHANGE_RATE_ESTIMATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "policy/multi_source_model.h"

namespace recrawl {
namespace policy {

struct ChangeRatePrior {
  double change_rate = 0.5;  // Δ_0, the prior's mode
  double weight = 1.0;       // w > 0, observations it is worth
};

// The interval open since a page's last crawl: its signals count (the
// counts' terms of ℓ) although no outcome has closed it, so a page that a
// high estimate keeps from being crawled is corrected by its signals.
struct OpenInterval {
  double tau_elap = 0.0;
  const SourceSignals* signals = nullptr;  // none: no signal
};

class SourceChangeRateEstimator {
 public:
  static constexpr double kMinFalseRate = 1e-9;

  // num_sources >= 1 (fewer are taken as 1). prior.change_rate and
  // prior.weight must be > 0 and finite (else the defaults are used).
  explicit SourceChangeRateEstimator(int num_sources, ChangeRatePrior prior = {});

  // One interval of length tau_elap ended by a crawl. InvalidArgument naming
  // the field for: tau_elap negative, NaN or infinite; signals with the wrong
  // number of counts or a negative count; changed = false with a joint event.
  absl::Status Add(double tau_elap, const SourceSignals& signals, bool changed);

  // The Δ maximising ℓ with the given sources (num_sources entries; λ_s in
  // [0, 1], ν_s >= 0, as MultiSourceModel::Check accepts), to a relative
  // 1e-9. `start`, when > 0, is where Newton's steps begin (the previous
  // estimate, for speed); it does not change the answer. `open` must be
  // valid as for Add (not checked).
  double Estimate(const std::vector<SourceParams>& sources, double start = 0.0,
                  const OpenInterval& open = {}) const;

  // ℓ(Δ) (for tests): −∞ where the data rule Δ out.
  double LogLikelihood(const std::vector<SourceParams>& sources, double change_rate,
                       const OpenInterval& open = {}) const;

  int num_sources() const { return num_sources_; }
  int64_t num_crawls() const { return num_crawls_; }

 private:
  // The sources' a, k_s and ν_s (floored).
  struct Rates {
    double unsignalled;         // a
    double joint;               // j
    std::vector<double> alone;  // k_s
    std::vector<double> false_rate;
  };
  Rates RatesOf(const std::vector<SourceParams>& sources) const;
  // The counts' sums over the closed intervals and `open`.
  struct Counts {
    double time;                  // T
    double joint;                 // N_J
    std::vector<double> signals;  // N_s
  };
  Counts CountsWith(const OpenInterval& open) const;
  // dℓ/dΔ at Δ = d, and d²ℓ/dΔ² in *curvature.
  double Score(const Rates& rates, const Counts& counts, double d, double* curvature) const;

  int num_sources_;
  ChangeRatePrior prior_;
  double time_ = 0.0;                      // T
  double unchanged_time_ = 0.0;            // T_0
  double joint_ = 0.0;                     // N_J
  std::vector<double> signals_;            // N_s
  std::vector<double> unchanged_signals_;  // N0_s
  int64_t num_crawls_ = 0;
  // Changed intervals without a joint event: τ, then n_s, flat.
  std::vector<float> changed_;
};

}  // namespace policy
}  // namespace recrawl

#endif  // RECRAWL_POLICY_SOURCE_CHANGE_RATE_ESTIMATOR_H_
