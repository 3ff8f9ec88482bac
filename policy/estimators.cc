#include "policy/estimators.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "policy/root_finding.h"

namespace recrawl {
namespace policy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Length of each of the two imaginary intervals of Algorithm 4 (line 11),
// and the imaginary half observation of line 14.
constexpr double kSmoothing = 0.5;

absl::Status CheckTime(const char* field, double value) {
  if (!(value >= 0.0) || std::isinf(value)) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be finite and >= 0, got ", value));
  }
  return absl::OkStatus();
}

absl::Status CheckCount(const char* field, int64_t value) {
  if (value < 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be >= 0, got ", value));
  }
  return absl::OkStatus();
}

// 1 / (e^s − 1) = q/(1 − q) with q = e^{−s}: the derivative of
// log(1 − e^{−s}); 0 for s = +∞.
double LogOneMinusExpSlope(double s) { return 1.0 / std::expm1(s); }

}  // namespace

namespace internal {

ChangedRecords::ChangedRecords(size_t capacity) : capacity_(std::max<size_t>(capacity, 4)) {}

void ChangedRecords::Add(double tau, double n) {
  buckets_.push_back({1.0, tau, n, 0.0, 0.0});
  total_weight_ += 1.0;
  if (buckets_.size() >= 2 * capacity_) Compress();
}

void ChangedRecords::Compress() {
  // Buckets are finer in n than in τ: within a bucket the quadrature
  // captures τ's spread to third order but n only through its mean.
  constexpr double kSignalBinRatio = 0.25;
  // Bucket key of a coordinate: its own bucket for 0, else ⌊ln(v)/w⌋.
  const auto key = [](double v, double w) -> int64_t {
    if (v <= 0.0) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(std::floor(std::log(v) / w));
  };
  double w = log_bin_width_ > 0.0 ? log_bin_width_ : 1.0 / 256.0;
  std::vector<std::pair<std::array<int64_t, 2>, size_t>> keyed(buckets_.size());
  for (;;) {
    for (size_t i = 0; i < buckets_.size(); ++i) {
      keyed[i] = {{key(buckets_[i].n, kSignalBinRatio * w), key(buckets_[i].tau, w)}, i};
    }
    std::sort(keyed.begin(), keyed.end());
    size_t count = 0;
    for (size_t i = 0; i < keyed.size(); ++i) {
      if (i == 0 || keyed[i].first != keyed[i - 1].first) ++count;
    }
    // Beyond w = 256 every bucket is one of the four (τ = 0 or not) x
    // (n = 0 or not) classes, and capacity_ >= 4.
    if (count <= capacity_ || w > 256.0) break;
    w *= 2.0;
  }
  log_bin_width_ = w;
  std::vector<Bucket> merged;
  merged.reserve(capacity_);
  for (size_t i = 0; i < keyed.size();) {
    Bucket acc = buckets_[keyed[i].second];
    size_t j = i + 1;
    for (; j < keyed.size() && keyed[j].first == keyed[i].first; ++j) {
      // Pooled moments of two groups A (acc) and B (Pébay 2008):
      //   M2 = M2a + M2b + δ² wa wb / W,
      //   M3 = M3a + M3b + δ³ wa wb (wa − wb) / W² + 3δ (wa M2b − wb M2a) / W,
      // δ = mean_b − mean_a, W = wa + wb.
      const Bucket& b = buckets_[keyed[j].second];
      const double total = acc.weight + b.weight;
      const double delta = b.tau - acc.tau;
      const double m2 = acc.m2 + b.m2 + delta * delta * acc.weight * b.weight / total;
      const double m3 = acc.m3 + b.m3 +
                        delta * delta * delta * acc.weight * b.weight * (acc.weight - b.weight) /
                            (total * total) +
                        3.0 * delta * (acc.weight * b.m2 - b.weight * acc.m2) / total;
      acc.tau += delta * b.weight / total;
      acc.n += (b.n - acc.n) * b.weight / total;
      acc.m2 = m2;
      acc.m3 = m3;
      acc.weight = total;
    }
    merged.push_back(acc);
    i = j;
  }
  buckets_ = std::move(merged);
}

std::vector<WeightedRecord> ChangedRecords::QuadraturePoints() const {
  std::vector<WeightedRecord> points;
  points.reserve(2 * buckets_.size());
  for (const Bucket& b : buckets_) {
    const double variance = b.m2 / b.weight;
    if (!(variance > 1e-24 * b.tau * b.tau)) {
      points.push_back({b.weight, b.tau, b.n});
      continue;
    }
    // Two points mean + d1 (weight p) and mean − d2 (weight 1 − p) with
    // mean 0, variance σ² and third moment m3 about the mean:
    //   d1·d2 = σ², d1 − d2 = m3/σ², p = d2/(d1 + d2).
    // Solved without cancellation whatever the sign of m3.
    const double skew = b.m3 / b.weight / variance;
    const double root = std::sqrt(skew * skew + 4.0 * variance);
    double d1, d2;
    if (skew >= 0.0) {
      d1 = 0.5 * (skew + root);
      d2 = variance / d1;
    } else {
      d2 = 0.5 * (root - skew);
      d1 = variance / d2;
    }
    const double p = d2 / (d1 + d2);
    points.push_back({b.weight * p, b.tau + d1, b.n});
    points.push_back({b.weight * (1.0 - p), std::max(0.0, b.tau - d2), b.n});
  }
  return points;
}

}  // namespace internal

// ---------------------------------------------------------------------------
// ChangeRateEstimator

ChangeRateEstimator::ChangeRateEstimator(size_t max_changed_points)
    : changed_(max_changed_points) {}

absl::Status ChangeRateEstimator::Add(double interval, bool changed) {
  if (absl::Status s = CheckTime("interval", interval); !s.ok()) return s;
  if (changed && interval == 0.0) {
    return absl::InvalidArgumentError("a change reported over an empty interval (interval = 0)");
  }
  ++num_crawls_;
  if (changed) {
    ++num_changed_;
    changed_.Add(interval, 0.0);
  } else {
    unchanged_time_ += interval;
  }
  return absl::OkStatus();
}

double ChangeRateEstimator::Estimate() const {
  // score(Δ) = Σ_{z=1} w a/(e^{aΔ} − 1) + s/(e^{sΔ} − 1) − A0, where
  // A0 = Σ_{z=0} a + s and s = 0.5. Each term a/(e^{aΔ} − 1) is decreasing
  // in Δ and below 1/Δ. Bracket:
  //  * lo = ln(1 + s/A0)/s makes the imaginary changed interval alone worth
  //    A0, so score(lo) >= 0;
  //  * hi = (W + 1)/A0, W = number of changed crawls: every changed term is
  //    < 1/hi, so score(hi) < (W + 1)/hi − A0 = 0.
  const double a0 = unchanged_time_ + kSmoothing;
  const double lo = std::log1p(kSmoothing / a0) / kSmoothing;
  const double hi = (changed_.total_weight() + 1.0) / a0;
  const std::vector<internal::WeightedRecord> records = changed_.QuadraturePoints();
  const auto score = [&](double log_delta) {
    const double delta = std::exp(log_delta);
    double sum = kSmoothing * LogOneMinusExpSlope(kSmoothing * delta);
    for (const internal::WeightedRecord& r : records) {
      sum += r.weight * r.tau * LogOneMinusExpSlope(r.tau * delta);
    }
    return sum / a0 - 1.0;
  };
  RootOptions options;
  options.abs_tol = 1e-15;
  return std::exp(FindRoot(score, std::log(lo), std::log(hi), options));
}

// ---------------------------------------------------------------------------
// PoissonRateEstimator

absl::Status PoissonRateEstimator::Add(double elapsed, int64_t changes) {
  if (absl::Status s = CheckTime("elapsed", elapsed); !s.ok()) return s;
  if (absl::Status s = CheckCount("changes", changes); !s.ok()) return s;
  observed_time_ += elapsed;
  num_changes_ += changes;
  return absl::OkStatus();
}

double PoissonRateEstimator::Estimate() const {
  return (static_cast<double>(num_changes_) + kSmoothing) / (observed_time_ + kSmoothing);
}

// ---------------------------------------------------------------------------
// NaiveSignalQualityEstimator

void NaiveSignalQualityEstimator::Add(bool had_signal, bool changed) {
  signalled_ += had_signal;
  changed_ += changed;
  signalled_and_changed_ += had_signal && changed;
}

NaiveSignalQuality NaiveSignalQualityEstimator::Estimate() const {
  NaiveSignalQuality q;
  const double both = static_cast<double>(signalled_and_changed_);
  q.precision_valid = signalled_ > 0;
  q.recall_valid = changed_ > 0;
  q.precision = q.precision_valid ? both / static_cast<double>(signalled_) : kNaN;
  q.recall = q.recall_valid ? both / static_cast<double>(changed_) : kNaN;
  return q;
}

// ---------------------------------------------------------------------------
// SignalModelEstimator

SignalModelParams SignalModelParamsFromFit(double alpha, double log_signal_factor,
                                           double signal_rate) {
  SignalModelParams p;
  // precision = λΔ/γ = 1 − ν/γ = 1 − e^{−αβ}; expm1 keeps it accurate when
  // signals are mostly false (αβ small).
  p.precision = signal_rate > 0.0 ? -std::expm1(-log_signal_factor) : 0.0;
  const double signalled_change_rate = signal_rate * p.precision;  // λΔ
  p.false_rate = signal_rate > 0.0 ? signal_rate * std::exp(-log_signal_factor) : 0.0;
  p.change_rate = alpha + signalled_change_rate;
  p.recall = p.change_rate > 0.0 ? signalled_change_rate / p.change_rate : 0.0;
  return p;
}

namespace {

using Vec2 = std::array<double, 2>;

struct LogLikelihood {
  double value;
  Vec2 gradient;
  std::array<Vec2, 2> hessian;
};

// ℓ(θ) = −θ·s0 + Σ w log(1 − e^{−θ·x}) over `changed`, with its gradient
// and Hessian:
//   ∇ℓ = −s0 + Σ w x / (e^{θ·x} − 1),
//   ∇²ℓ = −Σ w x xᵀ e^{−θ·x} / (1 − e^{−θ·x})².
// value is −∞ if some θ·x = 0 (a change where the model allows none).
LogLikelihood Evaluate(const Vec2& theta, const Vec2& s0,
                       const std::vector<internal::WeightedRecord>& changed,
                       bool with_derivatives) {
  LogLikelihood l{
      -theta[0] * s0[0] - theta[1] * s0[1], {-s0[0], -s0[1]}, {{{0.0, 0.0}, {0.0, 0.0}}}};
  for (const internal::WeightedRecord& r : changed) {
    const double s = theta[0] * r.tau + theta[1] * r.n;
    if (!(s > 0.0)) {
      l.value = -kInf;
      return l;
    }
    const double one_minus_q = -std::expm1(-s);  // 1 − e^{−s}
    l.value += r.weight * std::log(one_minus_q);
    if (!with_derivatives) continue;
    const double slope = r.weight * LogOneMinusExpSlope(s);
    l.gradient[0] += slope * r.tau;
    l.gradient[1] += slope * r.n;
    const double curvature = r.weight * std::exp(-s) / (one_minus_q * one_minus_q);
    l.hessian[0][0] -= curvature * r.tau * r.tau;
    l.hessian[0][1] -= curvature * r.tau * r.n;
    l.hessian[1][1] -= curvature * r.n * r.n;
  }
  l.hessian[1][0] = l.hessian[0][1];
  return l;
}

// Maximises ℓ over θ >= 0 with θ_j held at its start value where `fit[j]`
// is false. Projected Newton: coordinates at their bound 0 whose gradient
// points outward are held (the active set); the Newton step on the others
// is projected back onto θ >= 0 and shortened until the Armijo condition
// holds. If the free Hessian block is not negative definite (e.g. no record
// varies along a coordinate), a gradient step scaled by the diagonal is
// used instead.
Vec2 MaximiseLogLikelihood(Vec2 theta, const Vec2& s0,
                           const std::vector<internal::WeightedRecord>& changed,
                           const std::array<bool, 2>& fit) {
  LogLikelihood l = Evaluate(theta, s0, changed, true);
  for (int it = 0; it < 200; ++it) {
    std::array<bool, 2> free = fit;
    for (int j = 0; j < 2; ++j) {
      if (theta[j] <= 0.0 && l.gradient[j] <= 0.0) free[j] = false;
    }
    Vec2 step = {0.0, 0.0};
    const double h00 = l.hessian[0][0], h01 = l.hessian[0][1], h11 = l.hessian[1][1];
    const double g0 = l.gradient[0], g1 = l.gradient[1];
    if (free[0] && free[1]) {
      const double det = h00 * h11 - h01 * h01;
      if (h00 < 0.0 && det > 1e-14 * h00 * h11) {
        step = {-(h11 * g0 - h01 * g1) / det, -(h00 * g1 - h01 * g0) / det};
      } else {
        step = {h00 < 0.0 ? -g0 / h00 : g0, h11 < 0.0 ? -g1 / h11 : g1};
      }
    } else if (free[0]) {
      step[0] = h00 < 0.0 ? -g0 / h00 : g0;
    } else if (free[1]) {
      step[1] = h11 < 0.0 ? -g1 / h11 : g1;
    } else {
      break;  // both held: a KKT point
    }
    // Backtracking along the projected path θ(t) = max(0, θ + t·step).
    double t = 1.0;
    bool accepted = false;
    Vec2 next = theta;
    LogLikelihood next_l = l;
    for (int k = 0; k < 80; ++k, t *= 0.5) {
      next = {std::max(0.0, theta[0] + t * step[0]), std::max(0.0, theta[1] + t * step[1])};
      // Armijo on the projected path; never accept a decrease.
      const double predicted =
          l.gradient[0] * (next[0] - theta[0]) + l.gradient[1] * (next[1] - theta[1]);
      next_l = Evaluate(next, s0, changed, false);
      if (next_l.value > -kInf && next_l.value >= l.value + 1e-4 * std::max(predicted, 0.0)) {
        accepted = true;
        break;
      }
    }
    if (!accepted) break;  // no further ascent in floating point
    const double moved = std::max(std::fabs(next[0] - theta[0]), std::fabs(next[1] - theta[1]));
    const double scale = std::max({next[0], next[1], 1e-300});
    theta = next;
    l = Evaluate(theta, s0, changed, true);
    if (moved <= 1e-12 * scale) break;
  }
  return theta;
}

}  // namespace

SignalModelEstimator::SignalModelEstimator(size_t max_changed_points)
    : changed_(max_changed_points) {}

absl::Status SignalModelEstimator::Add(double tau_elap, int64_t n_cis, bool changed) {
  if (absl::Status s = CheckTime("tau_elap", tau_elap); !s.ok()) return s;
  if (absl::Status s = CheckCount("n_cis", n_cis); !s.ok()) return s;
  if (changed && tau_elap == 0.0 && n_cis == 0) {
    return absl::InvalidArgumentError(
        "a change reported with tau_elap = 0 and n_cis = 0 has probability "
        "0 under the model");
  }
  const double n = static_cast<double>(n_cis);
  ++num_crawls_;
  total_tau_ += tau_elap;
  total_signals_ += n;
  if (changed) {
    ++num_changed_;
    changed_.Add(tau_elap, n);
  } else {
    unchanged_tau_ += tau_elap;
    unchanged_signals_ += n;
  }
  return absl::OkStatus();
}

SignalModelEstimate SignalModelEstimator::Estimate() const {
  SignalModelEstimate e;
  e.num_crawls = num_crawls_;
  e.num_changed = num_changed_;
  e.signal_rate = total_tau_ > 0.0 ? total_signals_ / total_tau_ : 0.0;
  e.alpha_stderr = kNaN;
  e.log_signal_factor_stderr = kNaN;
  if (num_crawls_ == 0) {
    e.params = SignalModelParamsFromFit(0.0, 0.0, 0.0);
    return e;
  }

  const std::vector<internal::WeightedRecord> all = changed_.QuadraturePoints();
  bool changed_with_tau = false, changed_with_signal = false;
  for (const internal::WeightedRecord& r : all) {
    changed_with_tau |= r.tau > 0.0;
    changed_with_signal |= r.n > 0.0;
  }
  // Directions along which ℓ never decreases send the MLE to infinity: a
  // coordinate whose unchanged sum is 0 while some changed crawl loads on
  // it. A coordinate that no crawl loads on at all is unidentified (0).
  const bool alpha_infinite = unchanged_tau_ == 0.0 && changed_with_tau;
  const bool ab_infinite = unchanged_signals_ == 0.0 && changed_with_signal;
  const bool ab_unused = total_signals_ == 0.0;

  if (alpha_infinite) {
    e.alpha = kInf;
    e.log_signal_factor = kNaN;
  } else {
    // Records whose probability of a change is 1 at the infinite αβ drop
    // out of the likelihood (log 1 = 0).
    std::vector<internal::WeightedRecord> kept;
    const std::vector<internal::WeightedRecord>* changed = &all;
    if (ab_infinite) {
      for (const internal::WeightedRecord& r : all) {
        if (r.n == 0.0) kept.push_back(r);
      }
      changed = &kept;
    }
    const bool fit_ab = !ab_infinite && !ab_unused;
    const std::array<bool, 2> fit = {true, fit_ab};
    // Any start with θ·x > 0 for every changed crawl has finite ℓ.
    const Vec2 start = {
        total_tau_ > 0.0 ? std::max(static_cast<double>(num_changed_), 1.0) / total_tau_ : 1.0,
        fit_ab ? 1.0 : 0.0};
    const Vec2 s0 = {unchanged_tau_, fit_ab ? unchanged_signals_ : 0.0};
    const Vec2 theta = MaximiseLogLikelihood(start, s0, *changed, fit);
    e.alpha = theta[0];
    e.log_signal_factor = ab_infinite ? kInf : theta[1];

    // Standard errors: inverse of the observed information on the free,
    // interior coordinates.
    const LogLikelihood l = Evaluate(theta, s0, *changed, true);
    const bool alpha_interior = theta[0] > 0.0;
    const bool ab_interior = fit_ab && theta[1] > 0.0;
    if (alpha_interior && ab_interior) {
      const double i00 = -l.hessian[0][0], i01 = -l.hessian[0][1], i11 = -l.hessian[1][1];
      const double det = i00 * i11 - i01 * i01;
      if (det > 0.0) {
        e.alpha_stderr = std::sqrt(i11 / det);
        e.log_signal_factor_stderr = std::sqrt(i00 / det);
      }
    } else if (alpha_interior && -l.hessian[0][0] > 0.0) {
      e.alpha_stderr = std::sqrt(-1.0 / l.hessian[0][0]);
    } else if (ab_interior && -l.hessian[1][1] > 0.0) {
      e.log_signal_factor_stderr = std::sqrt(-1.0 / l.hessian[1][1]);
    }
  }
  e.params = SignalModelParamsFromFit(e.alpha, e.log_signal_factor, e.signal_rate);
  e.valid = num_changed_ > 0 && num_changed_ < num_crawls_ && std::isfinite(e.alpha) &&
            std::isfinite(e.log_signal_factor);
  return e;
}

}  // namespace policy
}  // namespace recrawl
