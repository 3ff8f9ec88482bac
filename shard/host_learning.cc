#include "shard/host_learning.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace shard {
namespace {

uint32_t NextRefit(uint32_t fitted, const HostLearningOptions& o) {
  const uint32_t step = std::clamp(fitted / 4, o.min_refit_interval, o.max_refit_interval);
  return fitted + step;
}

// A page's sample of one parameter: x, its weight w = 1/v, its outcomes.
struct SpreadSample {
  double x = 0.0;
  double weight = 0.0;
  double outcomes = 0.0;
  bool ok = false;
};

// The page's samples of log α and log γ (host_learning.h).
void MakeSpreadSamples(const LearningState& page, const policy::PageParams& reference,
                       const LearningOptions& options, const HostLearningOptions& o,
                       SpreadSample* change, SpreadSample* signal) {
  *change = SpreadSample();
  *signal = SpreadSample();
  if (page.crawls < o.spread_min_page_outcomes) return;
  LearningState own = page;
  SetPrior(reference, &own);
  LearningOptions own_options = options;
  own_options.prior_weight = o.spread_prior_weight;
  own_options.optimism = 0.0;
  const double outcomes = static_cast<double>(page.crawls);
  const LearnedModel fit = Fit(own, 1.0, own_options);
  const double x = std::log(fit.alpha);
  const double v = fit.log_alpha_variance;
  if (fit.ok && std::isfinite(x) && v > 0.0 && std::isfinite(v)) {
    *change = {x, 1.0 / v, outcomes, true};
  }
  // γ̂ = (signals + w₀γ₀τ̄) / (signal_time + w₀τ̄), τ̄ the mean interval: a
  // Poisson rate whose log has variance 1 / (its count).
  const double interval = double{page.signal_time} / outcomes;
  const double pseudo_time = o.spread_prior_weight * interval;
  const double reference_rate = reference.recall * reference.change_rate + reference.false_rate;
  const double count = double{page.signals} + reference_rate * pseudo_time;
  const double time = double{page.signal_time} + pseudo_time;
  if (count > 0.0 && time > 0.0 && std::isfinite(count) && std::isfinite(time)) {
    *signal = {std::log(count / time), count, outcomes, true};
  }
}

void AddSpreadSample(const SpreadSample& s, double sign, SpreadSums* sums) {
  if (!s.ok) return;
  if (sign > 0) {
    ++sums->pages;
  } else if (sums->pages > 0) {
    --sums->pages;
  }
  sums->weights += sign * s.weight;
  sums->weighted_sum += sign * s.weight * s.x;
  sums->weighted_squares += sign * s.weight * s.x * s.x;
  sums->squared_weights += sign * s.weight * s.weight;
  sums->outcomes += sign * s.outcomes;
  if (sums->pages == 0) *sums = SpreadSums();  // no rounding left over
}

}  // namespace

absl::Status CheckHostLearningOptions(const HostLearningOptions& o, const LearningOptions& base) {
  if (o.min_outcomes == 0) return absl::InvalidArgumentError("min_outcomes must be at least 1");
  if (o.min_refit_interval == 0) {
    return absl::InvalidArgumentError("min_refit_interval must be at least 1");
  }
  if (o.max_refit_interval < o.min_refit_interval) {
    return absl::InvalidArgumentError("max_refit_interval must be at least min_refit_interval");
  }
  if (!(o.outcomes_per_weight > 0.0) || !std::isfinite(o.outcomes_per_weight)) {
    return absl::InvalidArgumentError("outcomes_per_weight must be a positive number");
  }
  if (!(o.max_prior_weight >= base.prior_weight) || !std::isfinite(o.max_prior_weight)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_prior_weight must be finite and at least prior_weight (", base.prior_weight, ")"));
  }
  if (o.spread_weight) {
    if (o.spread_min_page_outcomes == 0) {
      return absl::InvalidArgumentError("spread_min_page_outcomes must be at least 1");
    }
    if (o.spread_min_pages < 2) {
      return absl::InvalidArgumentError("spread_min_pages must be at least 2");
    }
    if (!(o.spread_prior_weight > 0.0) || !std::isfinite(o.spread_prior_weight)) {
      return absl::InvalidArgumentError("spread_prior_weight must be a positive number");
    }
  }
  return absl::OkStatus();
}

HostLearningState InitHostLearning(const policy::PageParams& population_prior) {
  HostLearningState host;
  host.pooled = InitLearning(population_prior);
  host.change_rate = static_cast<float>(population_prior.change_rate);
  host.recall = static_cast<float>(population_prior.recall);
  host.false_rate = static_cast<float>(population_prior.false_rate);
  return host;
}

HostLearningState HostLearningFromPage(const LearningState& page,
                                       const policy::PageParams& population_prior,
                                       const LearningOptions& options,
                                       const HostLearningOptions& host_options) {
  HostLearningState host = InitHostLearning(population_prior);
  host.pooled = page;
  SetPrior(population_prior, &host.pooled);
  UpdateHostSpread(InitLearning(population_prior), page, options, host_options, &host);
  return host;
}

void UpdateHostSpread(const LearningState& before, const LearningState& after,
                      const LearningOptions& options, const HostLearningOptions& host_options,
                      HostLearningState* host) {
  if (!host_options.spread_weight) return;
  const policy::PageParams reference = Prior(host->pooled);
  SpreadSample change;
  SpreadSample signal;
  MakeSpreadSamples(before, reference, options, host_options, &change, &signal);
  AddSpreadSample(change, -1.0, &host->spread.change);
  AddSpreadSample(signal, -1.0, &host->spread.signal);
  MakeSpreadSamples(after, reference, options, host_options, &change, &signal);
  AddSpreadSample(change, 1.0, &host->spread.change);
  AddSpreadSample(signal, 1.0, &host->spread.signal);
}

bool SpreadVariances(const SpreadSums& s, uint32_t min_pages, double* between,
                     double* per_outcome) {
  if (s.pages < min_pages || !(s.weights > 0.0)) return false;
  // DerSimonian–Laird: Q = Σ w x² − (Σ w x)² / Σ w has expectation
  // (N − 1) + τ² (Σ w − Σ w² / Σ w).
  const double q = s.weighted_squares - s.weighted_sum * s.weighted_sum / s.weights;
  const double scale = s.weights - s.squared_weights / s.weights;
  const double excess = q - (static_cast<double>(s.pages) - 1.0);
  *between = scale > 0.0 ? std::max(excess / scale, 0.0) : 0.0;
  *per_outcome = s.outcomes / s.weights;
  return true;
}

double HostSpreadWeight(const HostLearningState& host, const HostLearningOptions& host_options) {
  double weight = std::numeric_limits<double>::infinity();
  for (const SpreadSums* sums : {&host.spread.change, &host.spread.signal}) {
    double between = 0.0;
    double per_outcome = 0.0;
    if (SpreadVariances(*sums, host_options.spread_min_pages, &between, &per_outcome) &&
        between > 0.0) {
      weight = std::min(weight, per_outcome / between);
    }
  }
  return weight;
}

HostUpdate LearnHostFromCrawl(double tau, int64_t n_cis, bool changed, double t_delay,
                              const LearningOptions& options,
                              const HostLearningOptions& host_options, HostLearningState* host) {
  if (!LearnFromCrawl(tau, n_cis, changed, t_delay, &host->pooled)) return HostUpdate::kRejected;
  return RefitHostIfDue(options, host_options, host);
}

HostUpdate RefitHostIfDue(const LearningOptions& options, const HostLearningOptions& host_options,
                          HostLearningState* host) {
  const uint32_t n = host->pooled.crawls;
  const uint32_t due = host->fitted_outcomes == 0 ? host_options.min_outcomes
                                                  : NextRefit(host->fitted_outcomes, host_options);
  if (n < due) return HostUpdate::kLearned;
  // The pooled estimate, not made optimistic: optimism is for ranking a
  // page, and FitPage applies it.
  LearningOptions pooled_options = options;
  pooled_options.optimism = 0.0;
  const LearnedModel fit = Fit(host->pooled, 1.0, pooled_options);
  host->fitted_outcomes = n;
  if (!fit.ok) return HostUpdate::kLearned;
  host->change_rate = static_cast<float>(fit.estimate.change_rate);
  host->recall = static_cast<float>(fit.estimate.recall);
  host->false_rate = static_cast<float>(fit.estimate.false_rate);
  return HostUpdate::kRefitted;
}

policy::PageParams HostPrior(const HostLearningState& host) {
  return {0.0, host.change_rate, host.recall, host.false_rate};
}

double HostPriorWeight(const HostLearningState& host, const LearningOptions& options,
                       const HostLearningOptions& host_options) {
  const double extra = std::max(host_options.max_prior_weight - options.prior_weight, 0.0);
  const double by_count = options.prior_weight +
                          std::min(host.fitted_outcomes / host_options.outcomes_per_weight, extra);
  if (!host_options.spread_weight || host.fitted_outcomes == 0) return by_count;
  // c / τ², clamped; a quotient past by_count (or not finite) is by_count.
  const double by_spread = HostSpreadWeight(host, host_options);
  if (!(by_spread < by_count)) return by_count;
  return std::max(by_spread, options.prior_weight);
}

LearningOptions PageLearningOptions(const LearningState& page, const HostLearningState& host,
                                    const LearningOptions& options,
                                    const HostLearningOptions& host_options) {
  LearningOptions out = options;
  out.prior_weight = HostPriorWeight(host, options, host_options);
  const double extra = out.prior_weight - options.prior_weight;
  // Fit's level is optimism / (1 + crawls).
  out.optimism = options.optimism * (1.0 + page.crawls) / (1.0 + page.crawls + extra);
  return out;
}

LearnedModel FitPage(const HostLearningState& host, double importance,
                     const LearningOptions& options, const HostLearningOptions& host_options,
                     LearningState* page) {
  SetPrior(HostPrior(host), page);
  return Fit(*page, importance, PageLearningOptions(*page, host, options, host_options));
}

}  // namespace shard
}  // namespace recrawl
