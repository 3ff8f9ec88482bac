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

// Counts of one interval are kept as 16 bits.
constexpr int64_t kMaxIntervalCount = 65535;

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

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
  if (state.num_changed < 0 || state.num_crawls < state.num_changed) {
    return absl::InvalidArgumentError(absl::StrCat("num_changed must be in [0, num_crawls = ",
                                                   state.num_crawls, "], got ", state.num_changed));
  }
  if (state.changed.size() > static_cast<size_t>(state.num_changed) ||
      (max_changed_intervals > 0 && state.changed.size() > max_changed_intervals)) {
    return absl::InvalidArgumentError(
        absl::StrCat("changed: ", state.changed.size(), " intervals kept for ", state.num_changed,
                     " changed crawls with a bound of ", max_changed_intervals));
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
  out.sample_state_ = state.sample_state;
  for (const ChangedInterval& c : state.changed) {
    if (c.counts.size() != num) {
      return absl::InvalidArgumentError(
          absl::StrCat("changed.counts needs ", num, " entries, got ", c.counts.size()));
    }
    if (absl::Status e = CheckFinite("changed.change_rate", c.change_rate); !e.ok()) return e;
    if (absl::Status e = CheckFinite("changed.tau", c.tau); !e.ok()) return e;
    out.Keep(out.changed_rate_.size(), c.change_rate, c.tau, c.joint, c.counts);
  }
  return out;
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
  state.sample_state = sample_state_;
  const size_t num = static_cast<size_t>(num_sources_);
  state.changed.reserve(changed_rate_.size());
  for (size_t i = 0; i < changed_rate_.size(); ++i) {
    state.changed.push_back({changed_rate_[i], changed_tau_[i], changed_joint_[i],
                             std::vector<uint16_t>(changed_counts_.begin() + i * num,
                                                   changed_counts_.begin() + (i + 1) * num)});
  }
  return state;
}

void SourceTrustEstimator::Keep(size_t slot, float change_rate, float tau, uint16_t joint,
                                const std::vector<uint16_t>& counts) {
  const size_t num = static_cast<size_t>(num_sources_);
  if (slot == changed_rate_.size()) {
    changed_rate_.push_back(change_rate);
    changed_tau_.push_back(tau);
    changed_joint_.push_back(joint);
    changed_counts_.insert(changed_counts_.end(), counts.begin(), counts.end());
    return;
  }
  changed_rate_[slot] = change_rate;
  changed_tau_[slot] = tau;
  changed_joint_[slot] = joint;
  std::copy(counts.begin(), counts.end(), changed_counts_.begin() + slot * num);
}

absl::Status SourceTrustEstimator::Add(double change_rate, double tau_elap,
                                       const SourceSignals& signals, bool changed) {
  if (absl::Status s = CheckFinite("change_rate", change_rate); !s.ok()) return s;
  if (absl::Status s = CheckFinite("tau_elap", tau_elap); !s.ok()) return s;
  if (signals.counts.size() != static_cast<size_t>(num_sources_)) {
    return absl::InvalidArgumentError(absl::StrCat("signals.counts has ", signals.counts.size(),
                                                   " entries, the host has ", num_sources_,
                                                   " sources"));
  }
  for (size_t s = 0; s < signals.counts.size(); ++s) {
    if (signals.counts[s] < 0 || signals.counts[s] > kMaxIntervalCount) {
      return absl::InvalidArgumentError(absl::StrCat("signals.counts[", s, "] must be in [0, ",
                                                     kMaxIntervalCount, "], got ",
                                                     signals.counts[s]));
    }
  }
  if (signals.joint < 0 || signals.joint > kMaxIntervalCount) {
    return absl::InvalidArgumentError(
        absl::StrCat("signals.joint must be in [0, ", kMaxIntervalCount, "], got ", signals.joint));
  }
  if (signals.joint > 0 && !changed) {
    return absl::InvalidArgumentError(
        "changed must be true when signals.joint > 0 (a joint event is a change)");
  }
  if (changed && change_rate * tau_elap <= 0.0) {
    return absl::InvalidArgumentError(
        "changed is true over an interval where change_rate * tau_elap = 0");
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
  std::vector<uint16_t> counts(signals.counts.begin(), signals.counts.end());
  const auto joint = static_cast<uint16_t>(signals.joint);
  size_t slot = changed_rate_.size();
  if (max_changed_ > 0 && slot >= max_changed_) {
    // Reservoir sampling: the n-th changed interval replaces a kept one
    // with probability max_changed_ / n.
    slot = static_cast<size_t>(SplitMix64(&sample_state_) % static_cast<uint64_t>(num_changed_));
    if (slot >= max_changed_) return absl::OkStatus();
  }
  Keep(slot, static_cast<float>(change_rate), static_cast<float>(tau_elap), joint, counts);
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
  const size_t kept = changed_rate_.size();
  if (kept > 0) {
    double own = 0.0;
    for (size_t i = 0; i < kept; ++i) {
      const double d = changed_rate_[i], tau = changed_tau_[i];
      const uint16_t* counts = &changed_counts_[i * static_cast<size_t>(num)];
      double log_unchanged = -d * none * tau;  // log P(z = 0 | ...) when joint = 0
      for (int s = 0; s < num; ++s) {
        if (counts[s] == 0) continue;
        const double n = counts[s];
        own += n * std::log(d * exclusive[s] + sources[s].false_rate);
        log_unchanged -= n * std::log1p(d * exclusive[s] / sources[s].false_rate);
      }
      if (changed_joint_[i] > 0) {
        own += changed_joint_[i] * std::log(d * several);  // the outcome is certain
      } else {
        own += std::log(-std::expm1(log_unchanged));
      }
    }
    ll += own * (static_cast<double>(num_changed_) / static_cast<double>(kept));
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
