// Online estimate of each signal source's recall λ_s and false-signal rate
// ν_s for one host, pooled over the host's pages
// (docs/multi_source_model.md, "Learning per-source trust").
//
// Every crawl of one of the host's pages reports the interval since the
// page's previous crawl: its length τ, the signals seen in it as
// SourceSignals (single-source counts n_s, joint events n_J), whether the
// content changed (z), and the page's change rate Δ_i as the caller
// currently believes it (e.g. from ChangeRateEstimator, which does not use
// signals). The host's sources are shared by its pages; their Δ_i differ.
// Under the model of multi_source_model.h, with a(λ) = Π(1 − λ_r),
// k_s(λ) = λ_s Π_{r≠s}(1 − λ_r), j(λ) = 1 − a − Σ k_s, an interval
// contributes to the log-likelihood
//   Σ_s [n_s log γ_s − γ_s τ] + n_J log(Δ_i j) − Δ_i j τ      (the counts)
//   + log P(z | τ, n, n_J)                                      (the outcome)
// with γ_s = Δ_i k_s + ν_s and P(z = 0 | ...) = (M2) =
// exp(−Δ_i a τ − Σ_s n_s log1p(Δ_i k_s/ν_s)) when n_J = 0 (a joint event is
// a change for certain and its outcome carries no information). Estimate()
// maximises that likelihood plus a weak prior per source (Beta on λ_s with
// mode prior.recall, Gamma on ν_s with mode prior.false_rate, each worth
// prior.weight observations) over (logit λ_s, log ν_s) by BFGS, so that it is
// finite from the first crawl and a new page of a known host starts from
// what the host has shown.
//
// State: one record (Δ_i, τ, counts, joint, z) per crawl; no compaction
// (see the design note for the persisted, bounded form). Not thread-safe.
#ifndef RECRAWL_POLICY_SOURCE_TRUST_ESTIMATOR_H_
#define RECRAWL_POLICY_SOURCE_TRUST_ESTIMATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "policy/multi_source_model.h"

namespace recrawl {
namespace policy {

struct SourceTrustPrior {
  double recall = 0.5;      // mode of λ_s's prior
  double false_rate = 0.1;  // mode of ν_s's prior, per time unit
  double weight = 1.0;      // pseudo-observations behind each
};

struct SourceTrustEstimate {
  std::vector<SourceParams> sources;  // λ̂_s, ν̂_s
  double log_likelihood = 0.0;        // at the estimate, prior included
  int iterations = 0;
  bool converged = false;  // the gradient vanished to tolerance
  int64_t num_crawls = 0;
  int64_t num_changed = 0;
};

class SourceTrustEstimator {
 public:
  // num_sources >= 1; the prior applies to every source.
  explicit SourceTrustEstimator(int num_sources, SourceTrustPrior prior = {});

  // InvalidArgument naming the field for: change_rate or tau_elap negative,
  // NaN or infinite; signals with the wrong number of counts or a negative
  // count; changed = false with a joint event (a joint event is a change);
  // changed = true over an interval where nothing can have changed
  // (change_rate·tau_elap = 0).
  absl::Status Add(double change_rate, double tau_elap, const SourceSignals& signals, bool changed);

  SourceTrustEstimate Estimate() const;

  // The penalised log-likelihood at the given parameters (for tests and
  // diagnostics); −∞ where the data rule them out.
  double LogLikelihood(const std::vector<SourceParams>& sources) const;

  int num_sources() const { return num_sources_; }
  int64_t num_crawls() const { return static_cast<int64_t>(records_.size()); }

 private:
  struct Record {
    double change_rate;
    double tau;
    std::vector<int64_t> counts;
    int64_t joint;
    bool changed;
  };

  int num_sources_;
  SourceTrustPrior prior_;
  std::vector<Record> records_;
  int64_t num_changed_ = 0;
};

}  // namespace policy
}  // namespace recrawl

#endif  // RECRAWL_POLICY_SOURCE_TRUST_ESTIMATOR_H_
