#include "policy/source_change_rate_estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace policy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// The search's bounds on Δ.
constexpr double kMinRate = 1e-12;
constexpr double kMaxRate = 1e9;
constexpr double kRelativeTolerance = 1e-9;
constexpr int kMaxSteps = 200;

}  // namespace

SourceChangeRateEstimator::SourceChangeRateEstimator(int num_sources, ChangeRatePrior prior)
    : num_sources_(std::max(1, num_sources)),
      prior_(prior),
      signals_(num_sources_, 0.0),
      unchanged_signals_(num_sources_, 0.0) {
  if (!(prior_.change_rate > 0.0) || !std::isfinite(prior_.change_rate) || !(prior_.weight > 0.0) ||
      !std::isfinite(prior_.weight)) {
    prior_ = ChangeRatePrior();
  }
}

absl::Status SourceChangeRateEstimator::Add(double tau_elap, const SourceSignals& signals,
                                            bool changed) {
  if (!std::isfinite(tau_elap) || tau_elap < 0.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tau_elap: must be finite and >= 0, got ", tau_elap));
  }
  if (absl::Status s = CheckSourceSignals(signals, num_sources_); !s.ok()) return s;
  if (!changed && signals.joint > 0) {
    return absl::InvalidArgumentError("changed: a joint event is a change, got unchanged");
  }
  time_ += tau_elap;
  joint_ += static_cast<double>(signals.joint);
  for (int s = 0; s < num_sources_; ++s) {
    signals_[s] += static_cast<double>(signals.counts[s]);
  }
  if (!changed) {
    unchanged_time_ += tau_elap;
    for (int s = 0; s < num_sources_; ++s) {
      unchanged_signals_[s] += static_cast<double>(signals.counts[s]);
    }
  } else if (signals.joint == 0) {
    changed_.push_back(static_cast<float>(tau_elap));
    for (int64_t n : signals.counts) changed_.push_back(static_cast<float>(n));
  }
  ++num_crawls_;
  return absl::OkStatus();
}

SourceChangeRateEstimator::Rates SourceChangeRateEstimator::RatesOf(
    const std::vector<SourceParams>& sources) const {
  Rates r;
  r.unsignalled = 1.0;
  for (int s = 0; s < num_sources_; ++s) r.unsignalled *= 1.0 - sources[s].recall;
  r.alone.resize(num_sources_);
  r.false_rate.resize(num_sources_);
  double alone_sum = 0.0;
  for (int s = 0; s < num_sources_; ++s) {
    double others = 1.0;
    for (int q = 0; q < num_sources_; ++q) {
      if (q != s) others *= 1.0 - sources[q].recall;
    }
    r.alone[s] = sources[s].recall * others;
    alone_sum += r.alone[s];
    r.false_rate[s] = std::max(sources[s].false_rate, kMinFalseRate);
  }
  r.joint = std::max(0.0, 1.0 - r.unsignalled - alone_sum);
  return r;
}

SourceChangeRateEstimator::Counts SourceChangeRateEstimator::CountsWith(
    const OpenInterval& open) const {
  Counts c{time_ + open.tau_elap, joint_, signals_};
  if (open.signals != nullptr) {
    c.joint += static_cast<double>(open.signals->joint);
    for (int s = 0; s < num_sources_; ++s) {
      c.signals[s] += static_cast<double>(open.signals->counts[s]);
    }
  }
  return c;
}

double SourceChangeRateEstimator::Score(const Rates& r, const Counts& counts, double d,
                                        double* curvature) const {
  const double prior_rate = prior_.weight / prior_.change_rate;
  const double at_zero = prior_.weight + counts.joint;  // the terms in 1/Δ
  double score = at_zero / d - prior_rate - (1.0 - r.unsignalled) * counts.time -
                 r.unsignalled * unchanged_time_;
  double curve = -at_zero / (d * d);
  for (int s = 0; s < num_sources_; ++s) {
    const double n = counts.signals[s] - unchanged_signals_[s];
    if (n <= 0.0 || r.alone[s] <= 0.0) continue;
    const double q = r.alone[s] / (r.false_rate[s] + d * r.alone[s]);
    score += n * q;
    curve -= n * q * q;
  }
  const size_t stride = 1 + static_cast<size_t>(num_sources_);
  for (size_t i = 0; i < changed_.size(); i += stride) {
    const double tau = changed_[i];
    double g = d * r.unsignalled * tau;
    double slope = r.unsignalled * tau;  // g'
    double bend = 0.0;                   // g''
    for (int s = 0; s < num_sources_; ++s) {
      const double n = changed_[i + 1 + s];
      if (n <= 0.0 || r.alone[s] <= 0.0) continue;
      const double q = r.alone[s] / (r.false_rate[s] + d * r.alone[s]);
      g += n * std::log1p(d * r.alone[s] / r.false_rate[s]);
      slope += n * q;
      bend -= n * q * q;
    }
    if (!(g > 0.0)) continue;  // a change the sources say cannot be: no information
    const double em1 = std::expm1(g);
    // d/dΔ log(1 − e^{−g}) = g'/(e^g − 1).
    score += slope / em1;
    curve += bend / em1 - slope * slope * (em1 + 1.0) / (em1 * em1);
  }
  *curvature = curve;
  return score;
}

double SourceChangeRateEstimator::Estimate(const std::vector<SourceParams>& sources, double start,
                                           const OpenInterval& open) const {
  const Rates rates = RatesOf(sources);
  const Counts counts = CountsWith(open);
  double lo = kMinRate, hi = kMaxRate;
  double d = start > 0.0 && std::isfinite(start) ? std::clamp(start, kMinRate, kMaxRate)
                                                 : prior_.change_rate;
  for (int step = 0; step < kMaxSteps; ++step) {
    double curvature = 0.0;
    const double score = Score(rates, counts, d, &curvature);
    if (score == 0.0) return d;
    if (score > 0.0) {
      lo = d;
    } else {
      hi = d;
    }
    double next = curvature < 0.0 ? d - score / curvature : kInf;
    if (!(next > lo && next < hi)) {
      // Outside the bracket: double or halve while it is open, else bisect
      // (geometrically: Δ spans many orders of magnitude).
      if (hi >= kMaxRate) {
        next = std::min(2.0 * d, kMaxRate);
      } else if (lo <= kMinRate) {
        next = std::max(0.5 * d, kMinRate);
      } else {
        next = std::sqrt(lo * hi);
      }
    }
    if (std::fabs(next - d) <= kRelativeTolerance * d || hi - lo <= kRelativeTolerance * lo) {
      return next;
    }
    d = next;
  }
  return d;
}

double SourceChangeRateEstimator::LogLikelihood(const std::vector<SourceParams>& sources, double d,
                                                const OpenInterval& open) const {
  if (!(d > 0.0)) return -kInf;
  const Rates r = RatesOf(sources);
  const Counts counts = CountsWith(open);
  double ll = prior_.weight * std::log(d) - prior_.weight * d / prior_.change_rate;
  ll += -d * (1.0 - r.unsignalled) * counts.time - d * r.unsignalled * unchanged_time_;
  if (counts.joint > 0.0) ll += counts.joint * std::log(d * r.joint);
  for (int s = 0; s < num_sources_; ++s) {
    ll += counts.signals[s] * std::log(d * r.alone[s] + r.false_rate[s]) -
          unchanged_signals_[s] * std::log1p(d * r.alone[s] / r.false_rate[s]);
  }
  const size_t stride = 1 + static_cast<size_t>(num_sources_);
  for (size_t i = 0; i < changed_.size(); i += stride) {
    double g = d * r.unsignalled * changed_[i];
    for (int s = 0; s < num_sources_; ++s) {
      g += changed_[i + 1 + s] * std::log1p(d * r.alone[s] / r.false_rate[s]);
    }
    if (!(g > 0.0)) continue;
    ll += std::log(-std::expm1(-g));
  }
  return ll;
}

}  // namespace policy
}  // namespace recrawl
