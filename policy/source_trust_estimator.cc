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

SourceTrustEstimator::SourceTrustEstimator(int num_sources, SourceTrustPrior prior)
    : num_sources_(std::max(1, num_sources)), prior_(prior) {}

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
    if (signals.counts[s] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("signals.counts[", s, "] must be >= 0, got ", signals.counts[s]));
    }
  }
  if (signals.joint < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("signals.joint must be >= 0, got ", signals.joint));
  }
  if (signals.joint > 0 && !changed) {
    return absl::InvalidArgumentError(
        "changed must be true when signals.joint > 0 (a joint event is a change)");
  }
  if (changed && change_rate * tau_elap <= 0.0) {
    return absl::InvalidArgumentError(
        "changed is true over an interval where change_rate * tau_elap = 0");
  }
  records_.push_back({change_rate, tau_elap, signals.counts, signals.joint, changed});
  if (changed) ++num_changed_;
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
  for (int s = 0; s < num; ++s) {
    const double l = sources[s].recall, nu = sources[s].false_rate;
    ll += prior_.weight * (prior_.recall * std::log(l) + (1.0 - prior_.recall) * std::log1p(-l));
    ll += prior_.weight * (std::log(nu) - nu / prior_.false_rate);
  }
  for (const Record& r : records_) {
    const double d = r.change_rate;
    double log_unchanged = -d * none * r.tau;  // log P(z = 0 | ...) when joint = 0
    for (int s = 0; s < num; ++s) {
      const double nu = sources[s].false_rate;
      const double gamma = d * exclusive[s] + nu;
      const double n = static_cast<double>(r.counts[s]);
      if (n > 0) {
        ll += n * std::log(gamma);
        log_unchanged -= n * std::log1p(d * exclusive[s] / nu);
      }
      ll -= gamma * r.tau;
    }
    const double joint_rate = d * several;
    ll -= joint_rate * r.tau;
    if (r.joint > 0) {
      ll += static_cast<double>(r.joint) * std::log(joint_rate);
      continue;  // the outcome is certain
    }
    ll += r.changed ? std::log(-std::expm1(log_unchanged)) : log_unchanged;
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
  const double scale = 1.0 + static_cast<double>(records_.size());
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
  out.num_crawls = static_cast<int64_t>(records_.size());
  out.num_changed = num_changed_;
  return out;
}

}  // namespace policy
}  // namespace recrawl
