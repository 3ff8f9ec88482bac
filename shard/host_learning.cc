#include "shard/host_learning.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace shard {
namespace {

uint32_t NextRefit(uint32_t fitted, const HostLearningOptions& o) {
  const uint32_t step = std::clamp(fitted / 4, o.min_refit_interval, o.max_refit_interval);
  return fitted + step;
}

// `base` grown by the host's fitted outcomes, bounded by `max`.
double GrownWeight(double base, double max, const HostLearningState& host,
                   const HostLearningOptions& o) {
  const double extra = std::max(max - base, 0.0);
  return base + std::min(host.fitted_outcomes / o.outcomes_per_weight, extra);
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
  if (!(o.max_signal_prior_weight >= base.signal_prior_weight) ||
      !std::isfinite(o.max_signal_prior_weight)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_signal_prior_weight must be finite and at least signal_prior_weight (",
                     base.signal_prior_weight, ")"));
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
                                       const policy::PageParams& population_prior) {
  HostLearningState host = InitHostLearning(population_prior);
  host.pooled = page;
  SetPrior(population_prior, &host.pooled);
  return host;
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
  return GrownWeight(options.prior_weight, host_options.max_prior_weight, host, host_options);
}

double HostSignalPriorWeight(const HostLearningState& host, const LearningOptions& options,
                             const HostLearningOptions& host_options) {
  return GrownWeight(options.signal_prior_weight, host_options.max_signal_prior_weight, host,
                     host_options);
}

LearningOptions PageLearningOptions(const LearningState& page, const HostLearningState& host,
                                    const LearningOptions& options,
                                    const HostLearningOptions& host_options) {
  LearningOptions out = options;
  out.prior_weight = HostPriorWeight(host, options, host_options);
  out.signal_prior_weight = HostSignalPriorWeight(host, options, host_options);
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
