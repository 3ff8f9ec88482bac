#include "policy/source_trust_estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace policy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Bounds of the search space: logit λ and log ν.
constexpr double kMaxLogit = 25.0;
constexpr double kMinLogRate = -25.0;
constexpr double kMaxLogRate = 10.0;
constexpr int kMaxIterations = 200;
constexpr double kGradientTolerance = 1e-7;

absl::Status CheckFinite(const char* field, double value) {
  if (std::isnan(value)) return absl::InvalidArgumentError(absl::StrCat(field, " is NaN"));
  if (std::isinf(value)) return absl::InvalidArgumentError(absl::StrCat(field, " is infinite"));
  if (value < 0.0) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be >= 0, got ", value));
  }
  return absl::OkStatus();
}

// Added to the distance of kept intervals whose counts differ.
constexpr float kOtherCounts = 1e6f;

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

std::vector<SourceParams> FromSearchSpace(const std::vector<double>& x) {
  const size_t num = x.size() / 2;
  std::vector<SourceParams> out(num);
  for (size_t s = 0; s < num; ++s) {
    out[s] = {Sigmoid(std::clamp(x[2 * s], -kMaxLogit, kMaxLogit)),
              std::exp(std::clamp(x[2 * s + 1], kMinLogRate, kMaxLogRate))};
  }
  return out;
}

}  // namespace

SourceTrustEstimator::SourceTrustEstimator(int num_sources, SourceTrustPrior prior,
                                           size_t max_changed_intervals)
    : num_sources_(std::max(1, num_sources)),
      prior_(prior),
      max_changed_(max_changed_intervals),
      signals_(num_sources_, 0.0),
      unchanged_signals_(num_sources_, 0.0) {}

absl::StatusOr<SourceTrustEstimator> SourceTrustEstimator::FromState(const SourceTrustState& state,
                                                                     SourceTrustPrior prior,
                                                                     size_t max_changed_intervals) {
  if (state.num_sources < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_sources must be >= 1, got ", state.num_sources));
  }
  const size_t num = static_cast<size_t>(state.num_sources);
  if (state.signals.size() != num || state.unchanged_signals.size() != num) {
    return absl::InvalidArgumentError(absl::StrCat("signals and unchanged_signals need ", num,
                                                   " entries, got ", state.signals.size(), " and ",
                                                   state.unchanged_signals.size()));
  }
  for (size_t s = 0; s < num; ++s) {
    if (absl::Status e = CheckFinite("signals[]", state.signals[s]); !e.ok()) return e;
    if (absl::Status e = CheckFinite("unchanged_signals[]", state.unchanged_signals[s]); !e.ok()) {
      return e;
    }
  }
  for (const auto& [field, value] :
       {std::pair<const char*, double>{"unchanged_time", state.unchanged_time},
        {"unchanged_exposure", state.unchanged_exposure},
        {"changed_time", state.changed_time},
        {"changed_exposure", state.changed_exposure}}) {
    if (absl::Status e = CheckFinite(field, value); !e.ok()) return e;
  }
  if (max_changed_intervals > 0 && state.compress_at > 3 * max_changed_intervals) {
    return absl::InvalidArgumentError(absl::StrCat("compress_at: ", state.compress_at,
                                                   " is above three times the bound ",
                                                   max_changed_intervals));
  }
  if (state.num_changed < 0 || state.num_crawls < state.num_changed) {
    return absl::InvalidArgumentError(absl::StrCat("num_changed must be in [0, num_crawls = ",
                                                   state.num_crawls, "], got ", state.num_changed));
  }
  if (state.changed.size() > static_cast<size_t>(state.num_changed) ||
      (max_changed_intervals > 0 && state.changed.size() >= 3 * max_changed_intervals)) {
    return absl::InvalidArgumentError(
        absl::StrCat("changed: ", state.changed.size(), " intervals kept for ", state.num_changed,
                     " changed crawls with a bound of ", max_changed_intervals,
                     " (fewer than three times as many)"));
  }
  SourceTrustEstimator out(state.num_sources, prior, max_changed_intervals);
  out.signals_ = state.signals;
  out.unchanged_signals_ = state.unchanged_signals;
  out.unchanged_time_ = state.unchanged_time;
  out.unchanged_exposure_ = state.unchanged_exposure;
  out.changed_time_ = state.changed_time;
  out.changed_exposure_ = state.changed_exposure;
  out.num_crawls_ = state.num_crawls;
  out.num_changed_ = state.num_changed;
  out.compress_at_ = static_cast<size_t>(state.compress_at);
  double weight = 0.0;
  for (const ChangedInterval& c : state.changed) {
    if (c.counts.size() != num) {
      return absl::InvalidArgumentError(
          absl::StrCat("changed.counts needs ", num, " entries, got ", c.counts.size()));
    }
    for (const auto& [field, value] : {std::pair<const char*, double>{"changed.weight", c.weight},
                                       {"changed.change_rate", c.change_rate},
                                       {"changed.tau", c.tau},
                                       {"changed.joint", c.joint}}) {
      if (absl::Status e = CheckFinite(field, value); !e.ok()) return e;
    }
    for (float n : c.counts) {
      if (absl::Status e = CheckFinite("changed.counts[]", n); !e.ok()) return e;
    }
    weight += c.weight;
    out.kept_.insert(out.kept_.end(), {c.weight, c.change_rate, c.tau, c.joint});
    out.kept_.insert(out.kept_.end(), c.counts.begin(), c.counts.end());
  }
  if (std::fabs(weight - static_cast<double>(state.num_changed)) > 1e-3 * std::max(1.0, weight)) {
    return absl::InvalidArgumentError(
        absl::StrCat("changed.weight: the kept intervals stand for ", weight,
                     " changed crawls, not num_changed = ", state.num_changed));
  }
  return out;
}

double SourceTrustEstimator::MeanChangeRate() const {
  const double time = unchanged_time_ + changed_time_;
  return time > 0.0 ? (unchanged_exposure_ + changed_exposure_) / time : 0.0;
}

SourceTrustState SourceTrustEstimator::State() const {
  SourceTrustState state;
  state.num_sources = num_sources_;
  state.signals = signals_;
  state.unchanged_signals = unchanged_signals_;
  state.unchanged_time = unchanged_time_;
  state.unchanged_exposure = unchanged_exposure_;
  state.changed_time = changed_time_;
  state.changed_exposure = changed_exposure_;
  state.num_crawls = num_crawls_;
  state.num_changed = num_changed_;
  state.compress_at = compress_at_;
  const size_t stride = Stride();
  state.changed.reserve(kept_changed());
  for (size_t i = 0; i < kept_.size(); i += stride) {
    const float* k = &kept_[i];
    state.changed.push_back(
        {k[kWeight], k[kRate], k[kTau], k[kJoint], std::vector<float>(k + kCounts, k + stride)});
  }
  return state;
}

void SourceTrustEstimator::Compress() {
  const size_t stride = Stride(), kept = kept_changed();
  const size_t target = std::max<size_t>(max_changed_, 1);
  // An interval without signals contributes log(1 − e^{−Δ_i a τ}), a
  // function of x = Δ_i τ alone; one with signals depends on Δ_i too. The
  // distance of two intervals is the squared difference in log x, plus in
  // log Δ_i where either has signals; intervals whose counts differ are
  // kOtherCounts further apart, so that they merge last.
  std::vector<float> log_rate(kept), log_exposure(kept);
  for (size_t i = 0; i < kept; ++i) {
    const float* k = &kept_[i * stride];
    log_rate[i] = std::log(k[kRate]);
    log_exposure[i] = log_rate[i] + std::log(k[kTau]);
  }
  const auto signalled = [&](size_t i) {
    const float* k = &kept_[i * stride];
    return std::any_of(k + kJoint, k + stride, [](float n) { return n > 0.0f; });
  };
  // An interval with a joint event is certainly changed: its outcome adds
  // nothing, and what it adds beyond the sums, Σ_s n_s log γ_s + n_J log(Δ_i j),
  // is linear in its counts for a given Δ_i. So such intervals merge by
  // their Δ_i alone, whatever their counts. Merged with one without a joint
  // event, whose outcome informs the fit, the mean would lose that (a mean
  // joint count above 0): the two kinds never merge.
  const auto joint = [&](size_t i) { return kept_[i * stride + kJoint] > 0.0f; };
  const auto distance = [&](size_t i, size_t j) {
    const float* a = &kept_[i * stride];
    const float* b = &kept_[j * stride];
    if (joint(i) != joint(j)) return std::numeric_limits<float>::infinity();
    if (joint(i)) return (log_rate[i] - log_rate[j]) * (log_rate[i] - log_rate[j]);
    float d = (log_exposure[i] - log_exposure[j]) * (log_exposure[i] - log_exposure[j]);
    if (signalled(i) || signalled(j)) {
      d += (log_rate[i] - log_rate[j]) * (log_rate[i] - log_rate[j]);
    }
    for (size_t f = kJoint; f < stride; ++f) {
      if (a[f] != b[f]) d += kOtherCounts + (a[f] - b[f]) * (a[f] - b[f]);
    }
    return d;
  };
  // Neighbours in the order of (counts, log x) are merged, closest pairs
  // first, until `target` are left: O(k log k) for k intervals, run when
  // 2·target are kept, so O(log k) per interval added.
  std::vector<size_t> order(kept);
  for (size_t i = 0; i < kept; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t i, size_t j) {
    if (joint(i) != joint(j)) return joint(j);
    if (joint(i)) return log_rate[i] < log_rate[j];
    const float* a = &kept_[i * stride];
    const float* b = &kept_[j * stride];
    for (size_t f = kJoint; f < stride; ++f) {
      if (a[f] != b[f]) return a[f] < b[f];
    }
    return log_exposure[i] < log_exposure[j];
  });
  std::vector<std::pair<float, size_t>> gaps;  // (distance, position in order)
  gaps.reserve(kept);
  for (size_t p = 0; p + 1 < kept; ++p) gaps.push_back({distance(order[p], order[p + 1]), p});
  std::sort(gaps.begin(), gaps.end());
  std::vector<bool> gone(kept, false), merged(kept, false);
  size_t left = kept;
  // Intervals with other counts are merged only to bring the kept ones down
  // to twice the bound.
  const auto done = [&](float d) {
    return left <= target || (d >= kOtherCounts && left <= 2 * target);
  };
  while (!done(0.0f)) {
    bool progress = false;
    for (const auto& [d, p] : gaps) {
      if (done(d)) break;
      if (std::isinf(d)) continue;
      const size_t i = order[p], j = order[p + 1];
      if (gone[i] || gone[j] || merged[i] || merged[j]) continue;
      float* a = &kept_[i * stride];
      const float* b = &kept_[j * stride];
      const float w = a[kWeight] + b[kWeight];
      // Δ_i and x at their weighted geometric means, the counts at their
      // weighted arithmetic ones.
      const float rate = std::exp((log_rate[i] * a[kWeight] + log_rate[j] * b[kWeight]) / w);
      const float exposure =
          std::exp((log_exposure[i] * a[kWeight] + log_exposure[j] * b[kWeight]) / w);
      for (size_t f = kJoint; f < stride; ++f) {
        a[f] = (a[f] * a[kWeight] + b[f] * b[kWeight]) / w;
      }
      a[kRate] = rate;
      a[kTau] = exposure / rate;
      a[kWeight] = w;
      gone[j] = merged[i] = true;
      --left;
      progress = true;
    }
    if (!progress) break;
    // Another round over the merged intervals and their new neighbours.
    std::vector<size_t> next;
    for (size_t i : order) {
      if (!gone[i]) next.push_back(i);
    }
    order.swap(next);
    for (size_t p = 0; p < order.size(); ++p) {
      const float* k = &kept_[order[p] * stride];
      log_rate[order[p]] = std::log(k[kRate]);
      log_exposure[order[p]] = log_rate[order[p]] + std::log(k[kTau]);
      merged[order[p]] = false;
    }
    gaps.clear();
    for (size_t p = 0; p + 1 < order.size(); ++p) {
      gaps.push_back({distance(order[p], order[p + 1]), p});
    }
    std::sort(gaps.begin(), gaps.end());
  }
  std::vector<float> out;
  out.reserve(target * stride * 2);
  for (size_t i = 0; i < kept; ++i) {
    if (!gone[i])
      out.insert(out.end(), kept_.begin() + i * stride, kept_.begin() + (i + 1) * stride);
  }
  kept_.swap(out);
  compress_at_ = kept_changed() + target;
}

absl::Status SourceTrustEstimator::CheckInterval(double change_rate, double tau_elap,
                                                 const SourceSignals& signals, bool changed,
                                                 int num_sources) {
  if (absl::Status s = CheckFinite("change_rate", change_rate); !s.ok()) return s;
  if (absl::Status s = CheckFinite("tau_elap", tau_elap); !s.ok()) return s;
  if (absl::Status s = CheckSourceSignals(signals, num_sources); !s.ok()) return s;
  if (signals.joint > 0 && !changed) {
    return absl::InvalidArgumentError(
        "changed must be true when signals.joint > 0 (a joint event is a change)");
  }
  if (changed && change_rate * tau_elap <= 0.0) {
    return absl::InvalidArgumentError(
        "changed is true over an interval where change_rate * tau_elap = 0");
  }
  return absl::OkStatus();
}

absl::Status SourceTrustEstimator::Add(double change_rate, double tau_elap,
                                       const SourceSignals& signals, bool changed) {
  if (absl::Status s = CheckInterval(change_rate, tau_elap, signals, changed, num_sources_);
      !s.ok()) {
    return s;
  }
  ++num_crawls_;
  for (int s = 0; s < num_sources_; ++s) {
    signals_[s] += static_cast<double>(signals.counts[s]);
  }
  if (!changed) {
    for (int s = 0; s < num_sources_; ++s) {
      unchanged_signals_[s] += static_cast<double>(signals.counts[s]);
    }
    unchanged_time_ += tau_elap;
    unchanged_exposure_ += change_rate * tau_elap;
    return absl::OkStatus();
  }
  ++num_changed_;
  changed_time_ += tau_elap;
  changed_exposure_ += change_rate * tau_elap;
  kept_.insert(kept_.end(), {1.0f, static_cast<float>(change_rate), static_cast<float>(tau_elap),
                             static_cast<float>(signals.joint)});
  for (int64_t n : signals.counts) kept_.push_back(static_cast<float>(n));
  if (max_changed_ > 0 && kept_changed() >= std::max(2 * max_changed_, compress_at_)) Compress();
  return absl::OkStatus();
}

double SourceTrustEstimator::LogLikelihood(const std::vector<SourceParams>& sources) const {
  const int num = num_sources_;
  // a = Π(1 − λ_r), k_s = λ_s Π_{r≠s}(1 − λ_r), j = P(two or more signal).
  double none = 1.0, one = 0.0, several = 0.0;
  for (const SourceParams& p : sources) {
    several += one * p.recall;
    one = one * (1.0 - p.recall) + none * p.recall;
    none *= 1.0 - p.recall;
  }
  std::vector<double> exclusive(num);
  for (int s = 0; s < num; ++s) {
    double others = 1.0;
    for (int r = 0; r < num; ++r) {
      if (r != s) others *= 1.0 - sources[r].recall;
    }
    exclusive[s] = sources[s].recall * others;
  }
  double ll = 0.0;
  double false_rates = 0.0;
  for (int s = 0; s < num; ++s) {
    const double l = sources[s].recall, nu = sources[s].false_rate;
    ll += prior_.weight * (prior_.recall * std::log(l) + (1.0 - prior_.recall) * std::log1p(-l));
    ll += prior_.weight * (std::log(nu) - nu / prior_.false_rate);
    // Unchanged intervals: Σ_s (n_s log ν_s − ν_s τ) − Δ_i τ.
    if (unchanged_signals_[s] > 0) ll += unchanged_signals_[s] * std::log(nu);
    false_rates += nu;
  }
  ll -= false_rates * (unchanged_time_ + changed_time_) + unchanged_exposure_;
  // Changed intervals: −τ Σ_s ν_s − Δ_i τ (1 − a), summed above and here,
  // plus each interval's own terms.
  ll -= changed_exposure_ * (1.0 - none);
  const size_t stride = Stride();
  for (size_t i = 0; i < kept_.size(); i += stride) {
    const float* k = &kept_[i];
    const double d = k[kRate], tau = k[kTau];
    double own = 0.0;
    double log_unchanged = -d * none * tau;  // log P(z = 0 | ...) when joint = 0
    for (int s = 0; s < num; ++s) {
      const double n = k[kCounts + s];
      if (n == 0.0) continue;
      own += n * std::log(d * exclusive[s] + sources[s].false_rate);
      log_unchanged -= n * std::log1p(d * exclusive[s] / sources[s].false_rate);
    }
    if (k[kJoint] > 0.0f) {
      own += k[kJoint] * std::log(d * several);  // the outcome is certain
    } else {
      own += std::log(-std::expm1(log_unchanged));
    }
    ll += k[kWeight] * own;
  }
  return std::isnan(ll) ? -kInf : ll;
}

SourceTrustEstimate SourceTrustEstimator::Estimate() const {
  const size_t dim = 2 * static_cast<size_t>(num_sources_);
  const auto objective = [&](const std::vector<double>& x) {
    return -LogLikelihood(FromSearchSpace(x));
  };
  // Central-difference gradient of the objective.
  const auto gradient = [&](const std::vector<double>& x) {
    std::vector<double> g(dim);
    std::vector<double> y = x;
    for (size_t i = 0; i < dim; ++i) {
      const double h = 1e-5 * std::max(1.0, std::fabs(x[i]));
      y[i] = x[i] + h;
      const double up = objective(y);
      y[i] = x[i] - h;
      const double down = objective(y);
      y[i] = x[i];
      g[i] = (up - down) / (2 * h);
    }
    return g;
  };
  std::vector<double> x(dim);
  for (int s = 0; s < num_sources_; ++s) {
    x[2 * s] = std::log(prior_.recall / (1.0 - prior_.recall));
    x[2 * s + 1] = std::log(prior_.false_rate);
  }
  double f = objective(x);
  std::vector<double> g = gradient(x);
  // Inverse-Hessian approximation, BFGS.
  std::vector<double> inv(dim * dim, 0.0);
  for (size_t i = 0; i < dim; ++i) inv[i * dim + i] = 1.0;
  SourceTrustEstimate out;
  const double scale = 1.0 + static_cast<double>(num_crawls_);
  for (out.iterations = 0; out.iterations < kMaxIterations; ++out.iterations) {
    double g_norm = 0.0;
    for (double v : g) g_norm = std::max(g_norm, std::fabs(v));
    if (g_norm <= kGradientTolerance * scale) {
      out.converged = true;
      break;
    }
    std::vector<double> dir(dim, 0.0);
    double slope = 0.0;
    for (size_t i = 0; i < dim; ++i) {
      for (size_t j = 0; j < dim; ++j) dir[i] -= inv[i * dim + j] * g[j];
      slope += dir[i] * g[i];
    }
    if (slope >= 0.0) {  // not a descent direction: restart from −g
      std::fill(inv.begin(), inv.end(), 0.0);
      for (size_t i = 0; i < dim; ++i) {
        inv[i * dim + i] = 1.0;
        dir[i] = -g[i];
      }
      slope = 0.0;
      for (size_t i = 0; i < dim; ++i) slope += dir[i] * g[i];
    }
    // Backtracking (Armijo) line search.
    double step = 1.0, f_new = kInf;
    std::vector<double> x_new(dim);
    for (int k = 0; k < 60; ++k, step *= 0.5) {
      for (size_t i = 0; i < dim; ++i) x_new[i] = x[i] + step * dir[i];
      f_new = objective(x_new);
      if (f_new <= f + 1e-4 * step * slope) break;
    }
    if (!(f_new < f)) break;  // no progress possible at this precision
    const std::vector<double> g_new = gradient(x_new);
    std::vector<double> s(dim), y(dim);
    double sy = 0.0;
    for (size_t i = 0; i < dim; ++i) {
      s[i] = x_new[i] - x[i];
      y[i] = g_new[i] - g[i];
      sy += s[i] * y[i];
    }
    if (sy > 1e-12) {
      // H ← (I − ρ s yᵀ) H (I − ρ y sᵀ) + ρ s sᵀ.
      const double rho = 1.0 / sy;
      std::vector<double> hy(dim, 0.0);
      for (size_t i = 0; i < dim; ++i) {
        for (size_t j = 0; j < dim; ++j) hy[i] += inv[i * dim + j] * y[j];
      }
      double yhy = 0.0;
      for (size_t i = 0; i < dim; ++i) yhy += y[i] * hy[i];
      for (size_t i = 0; i < dim; ++i) {
        for (size_t j = 0; j < dim; ++j) {
          inv[i * dim + j] +=
              -rho * (hy[i] * s[j] + s[i] * hy[j]) + (rho * rho * yhy + rho) * s[i] * s[j];
        }
      }
    }
    x = std::move(x_new);
    f = f_new;
    g = g_new;
  }
  out.sources = FromSearchSpace(x);
  out.log_likelihood = -f;
  out.num_crawls = num_crawls_;
  out.num_changed = num_changed_;
  return out;
}

}  // namespace policy
}  // namespace recrawl
