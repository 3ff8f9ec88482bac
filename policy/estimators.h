// Online estimators of the change model from crawl outcomes:
//
//  * ChangeRateEstimator — Δ from incomplete observations (was the page
//    changed since the previous crawl?): the MLE of Cho & Garcia-Molina,
//    Kolobov et al. Eq. 14, smoothed as in Kolobov's Algorithm 4.
//  * PoissonRateEstimator — Δ from complete observations (every change is
//    notified): Kolobov Eq. 15, smoothed as in Algorithm 4.
//  * NaiveSignalQualityEstimator — the per-interval precision / recall counts
//    that App. E of the main paper (Busa-Fekete et al.) shows to be biased.
//  * SignalModelEstimator — the App. E maximum-likelihood fit of
//    θ = (α, αβ) in P(unchanged | τ_elap, n_cis) = exp(−α τ_elap − αβ n_cis),
//    plus γ̂ from the signal count, giving estimates of (Δ, λ, ν).
//
// Every estimator is an object fed one crawl at a time with Add() and asked
// for its current Estimate(). State size:
//  * constant: PoissonRateEstimator, NaiveSignalQualityEstimator, and the
//    unchanged-interval part of the two MLEs (an unchanged crawl contributes
//    a term linear in the parameters, so only sums are kept);
//  * bounded, not constant: the changed-interval part of the two MLEs. A
//    changed crawl contributes log(1 − e^{−s}) with s linear in the
//    parameters, which no finite set of sums captures exactly. Changed
//    crawls are kept exactly up to 2·max_changed_points; beyond that they
//    are merged into at most max_changed_points buckets that keep their
//    count and the first three moments of τ (internal::ChangedRecords).
//    Unlike a FIFO window of changed crawls next to all-time unchanged sums
//    (which would make the likelihood inconsistent and bias the estimate),
//    this forgets nothing; its approximation error was measured at ~1e-3
//    standard errors with the default 256 points (estimators_test.cc).
// No estimator forgets: callers that want recency (non-stationary pages)
// rebuild one from their window of recent outcomes.
//
// Time is in the caller's unit; the 0.5 smoothing of Algorithm 4 is 0.5 of
// that unit (Kolobov works in days).
#ifndef RECRAWL_POLICY_ESTIMATORS_H_
#define RECRAWL_POLICY_ESTIMATORS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "policy/page_model.h"

namespace recrawl {
namespace policy {

inline constexpr size_t kDefaultMaxChangedPoints = 256;

namespace internal {

// A point of the changed-crawl part of a likelihood: `weight` crawls at
// (τ, n).
struct WeightedRecord {
  double weight;
  double tau;  // elapsed time since the previous crawl
  double n;    // number of signals in that interval
};

// Changed-crawl records with bounded memory. Records are stored as given
// until there are 2·capacity of them; then they are bucketed on a
// logarithmic grid in τ and in n (width w in log space, starting at 1/256
// and doubling until at most `capacity` buckets remain). A bucket keeps its
// weight, the mean of n and the mean and second and third central moments
// of τ (merged exactly, Pébay's update formulas). Buckets of width 2w
// contain whole buckets of width w, so later merges never split earlier
// ones; τ = 0 and n = 0 get buckets of their own, so unsignalled crawls are
// never mixed with signalled ones.
//
// QuadraturePoints() turns every bucket into the two-point Gauss quadrature
// of its τ distribution (two weighted points that match its weight, mean,
// variance and third moment, and lie inside its range), n at the bucket
// mean. A sum Σ f(θ·x_i) over the original records is then approximated
// with an error of fourth order in the bucket's relative width in τ (second
// order in its width in n, which is 0 while distinct counts are kept apart),
// and since the points are ordinary weighted records the likelihood keeps
// its concavity.
class ChangedRecords {
 public:
  explicit ChangedRecords(size_t capacity);

  void Add(double tau, double n);

  // At most 2·(2·capacity − 1) points; the records themselves while none
  // has been merged.
  std::vector<WeightedRecord> QuadraturePoints() const;

  size_t size() const { return buckets_.size(); }
  // Total weight = number of records added.
  double total_weight() const { return total_weight_; }
  // 0 while every record is kept exactly, else the current bucket width w.
  double log_bin_width() const { return log_bin_width_; }

 private:
  struct Bucket {
    double weight;
    double tau;  // mean
    double n;    // mean
    double m2;   // Σ weight·(τ − mean)²
    double m3;   // Σ weight·(τ − mean)³
  };

  void Compress();

  size_t capacity_;
  double log_bin_width_ = 0.0;
  double total_weight_ = 0.0;
  std::vector<Bucket> buckets_;
};

}  // namespace internal

// Δ from incomplete change observations: each crawl reports whether the page
// changed (z = 1) since the previous crawl, `interval` time units earlier.
// Estimate() solves the smoothed Eq. 14,
//   Σ_{z=1} a_j / (e^{a_j Δ} − 1) + 0.5 / (e^{0.5 Δ} − 1) − Σ_{z=0} a_j − 0.5 = 0,
// i.e. Eq. 14 with one imaginary changed and one imaginary unchanged
// interval of length 0.5 (Algorithm 4, line 11; the printed line drops the
// "− 1" of Eq. 14's denominators and writes Δ_{n−1} for the unknown). The
// left side is strictly decreasing in Δ, from +∞ at 0 to −(Σ_{z=0} a + 0.5),
// so the root always exists, is positive and finite even with no data
// (2 ln 2) or only changes; it is found by Brent's method in ln Δ inside a
// bracket that is guaranteed analytically (see estimators.cc).
// State: Σ_{z=0} a_j, plus the changed intervals (internal::ChangedRecords).
class ChangeRateEstimator {
 public:
  explicit ChangeRateEstimator(size_t max_changed_points = kDefaultMaxChangedPoints);

  // InvalidArgument for a negative, NaN or infinite interval, or a change
  // reported over an empty interval (impossible under the Poisson model).
  absl::Status Add(double interval, bool changed);

  double Estimate() const;

  int64_t num_crawls() const { return num_crawls_; }
  int64_t num_changed() const { return num_changed_; }

 private:
  double unchanged_time_ = 0.0;
  int64_t num_crawls_ = 0;
  int64_t num_changed_ = 0;
  internal::ChangedRecords changed_;
};

// Δ from complete change observations: over `elapsed` time units the
// tracker received `changes` change notifications. Estimate() is the
// smoothed Eq. 15 of Algorithm 4 (line 14), (U + 0.5) / (T + 0.5): always
// positive and finite. Constant state.
class PoissonRateEstimator {
 public:
  // InvalidArgument for negative, NaN or infinite `elapsed` or negative
  // `changes`.
  absl::Status Add(double elapsed, int64_t changes);

  double Estimate() const;

  double observed_time() const { return observed_time_; }
  int64_t num_changes() const { return num_changes_; }

 private:
  double observed_time_ = 0.0;
  int64_t num_changes_ = 0;
};

struct NaiveSignalQuality {
  // #(intervals with a signal and a change) / #(intervals with a signal);
  // NaN (and precision_valid false) without any signalled interval.
  double precision = 0.0;
  // #(intervals with a signal and a change) / #(intervals with a change);
  // NaN (and recall_valid false) without any changed interval.
  double recall = 0.0;
  bool precision_valid = false;
  bool recall_valid = false;
};

// The naive estimator of App. E (main paper): it treats each crawl interval
// as one event, so an interval holding a false signal and an unsignalled
// change counts as a true signal, and several changes count as one. It is
// biased (Fig. 13) and kept as a baseline. (The printed formula's precision
// has the same count above and below the line; the denominator is the number
// of intervals with a signal.) Constant state.
class NaiveSignalQualityEstimator {
 public:
  void Add(bool had_signal, bool changed);
  NaiveSignalQuality Estimate() const;

 private:
  int64_t signalled_ = 0;
  int64_t changed_ = 0;
  int64_t signalled_and_changed_ = 0;
};

// Page parameters from (α, αβ, γ), inverting Sec. 3 of the main paper:
//   ν = γ e^{−αβ},  λΔ = γ − ν,  Δ = α + λΔ,  λ = λΔ/Δ,  precision = λΔ/γ.
// αβ = +∞ gives ν = 0 (every signal is a change). λ = 0 when Δ = 0 and
// precision = 0 when γ = 0.
struct SignalModelParams {
  double change_rate = 0.0;  // Δ
  double recall = 0.0;       // λ
  double false_rate = 0.0;   // ν
  double precision = 0.0;    // λΔ/γ = 1 − e^{−αβ}
};
SignalModelParams SignalModelParamsFromFit(double alpha, double log_signal_factor,
                                           double signal_rate);

struct SignalModelEstimate {
  // The MLE θ̂ = (α̂, (αβ)^), both >= 0. α̂ = +∞ when no unchanged crawl had
  // positive elapsed time (every change-capable interval changed);
  // (αβ)^ = +∞ when no unchanged crawl had a signal but a changed one did
  // (the data cannot rule out ν = 0). When no crawl saw any signal, αβ does
  // not enter the likelihood and is reported as 0.
  double alpha = 0.0;
  double log_signal_factor = 0.0;
  // γ̂ = Σ n_cis / Σ τ_elap over all crawls (0 without observed time).
  double signal_rate = 0.0;
  // Asymptotic standard errors of α̂ and (αβ)^ from the observed Fisher
  // information at θ̂; NaN when θ̂ is infinite or on the boundary θ_j = 0.
  double alpha_stderr = 0.0;
  double log_signal_factor_stderr = 0.0;
  // SignalModelParamsFromFit(alpha, log_signal_factor, signal_rate).
  SignalModelParams params;
  // True when there is at least one changed and one unchanged crawl and
  // α̂, (αβ)^ are finite: the estimate can be used as is. False means the
  // data cannot pin the model down yet (the fields above still hold the
  // MLE, possibly infinite); fall back on a prior.
  bool valid = false;
  int64_t num_crawls = 0;
  int64_t num_changed = 0;

  // The estimate as PageModel input, with the given importance.
  PageParams ToPageParams(double importance) const {
    return {importance, params.change_rate, params.recall, params.false_rate};
  }
};

// App. E of the main paper: crawl outcomes z with P(z = 0 | τ, n) =
// exp(−α τ − αβ n), fitted by maximum likelihood. The log-likelihood
//   ℓ(θ) = −θ·Σ_{z=0} x + Σ_{z=1} log(1 − e^{−θ·x}),   x = (τ_elap, n_cis),
// is concave; Estimate() maximises it over θ >= 0 by Newton's method with
// projection onto θ >= 0 and a backtracking (Armijo) line search, falling
// back to a projected gradient step if the Hessian is singular, to a
// relative step of 1e-12. The crawl schedule may depend on past signals and
// outcomes (the likelihood conditions on x), e.g. the GREEDY-NCIS threshold
// policy.
// State: Σ_{z=0} τ, Σ_{z=0} n (constant) and the changed crawls
// (internal::ChangedRecords, bounded); plus Σ τ and Σ n over all crawls
// for γ̂.
class SignalModelEstimator {
 public:
  explicit SignalModelEstimator(size_t max_changed_points = kDefaultMaxChangedPoints);

  // InvalidArgument for negative, NaN or infinite τ_elap, negative n_cis, or
  // a change reported with τ_elap = 0 and n_cis = 0 (impossible: the
  // likelihood would be 0).
  absl::Status Add(double tau_elap, int64_t n_cis, bool changed);

  SignalModelEstimate Estimate() const;

  int64_t num_crawls() const { return num_crawls_; }
  int64_t num_changed() const { return num_changed_; }

 private:
  double unchanged_tau_ = 0.0;
  double unchanged_signals_ = 0.0;
  double total_tau_ = 0.0;
  double total_signals_ = 0.0;
  int64_t num_crawls_ = 0;
  int64_t num_changed_ = 0;
  internal::ChangedRecords changed_;
};

}  // namespace policy
}  // namespace recrawl

#endif  // RECRAWL_POLICY_ESTIMATORS_H_
