#include "sim/learning_scheduler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace sim {

policy::PageParams IndexView(const policy::PageParams& model, double min_precision) {
  const double signalled = model.recall * model.change_rate;
  if (signalled >= min_precision * (signalled + model.false_rate)) return model;
  policy::PageParams view = model;
  view.recall = 0.0;
  view.false_rate = 0.0;
  return view;
}

absl::StatusOr<std::unique_ptr<LearningScheduler>> LearningScheduler::Create(
    const std::vector<policy::PageParams>& priors, const LearningSchedulerOptions& options,
    const std::vector<int32_t>& hosts) {
  int32_t num_hosts = 0;
  if (options.host_pooling) {
    if (absl::Status s = shard::CheckHostLearningOptions(options.host, options.learning); !s.ok()) {
      return s;
    }
    if (hosts.size() != priors.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("hosts: ", hosts.size(), " host ids for ", priors.size(), " pages"));
    }
    for (const int32_t h : hosts) {
      if (h < 0) return absl::InvalidArgumentError(absl::StrCat("hosts: negative host id ", h));
      num_hosts = std::max(num_hosts, h + 1);
    }
  }
  // μ̃, as the other value policies get it.
  std::vector<policy::PageParams> model = NormalisedImportance(priors);
  std::vector<policy::PageParams> view(priors.size());
  std::vector<shard::LearningState> learning(priors.size());
  shard::PriorRanking prior_ranking(options.learning);
  for (size_t i = 0; i < priors.size(); ++i) {
    learning[i] = shard::InitLearning(priors[i]);
    // As the shard ranks a URL it has not crawled yet.
    if (options.learn) model[i] = prior_ranking.Ranked(model[i]);
    view[i] = IndexView(model[i], options.min_signal_precision);
  }
  ValueSchedulerOptions value_options;
  value_options.argmax = options.argmax;
  value_options.target_candidates = options.target_candidates;
  absl::StatusOr<std::unique_ptr<ValueScheduler>> values = ValueScheduler::Create(
      view, std::vector<policy::CrawlPolicy>(priors.size(), options.policy), value_options);
  if (!values.ok()) return values.status();
  std::unique_ptr<LearningScheduler> out(
      new LearningScheduler(*std::move(values), std::move(model), std::move(learning), options));
  if (options.host_pooling) {
    out->host_of_ = hosts;
    out->host_.resize(num_hosts);
    out->host_pages_.resize(num_hosts);
    for (size_t i = priors.size(); i-- > 0;) {
      out->host_[hosts[i]] = shard::InitHostLearning(priors[i]);  // the first page's wins
      out->host_pages_[hosts[i]].push_back(static_cast<int32_t>(i));
    }
  }
  return out;
}

shard::LearnedModel LearningScheduler::FitModel(int page) {
  if (!options_.host_pooling) {
    return shard::Fit(learning_[page], model_[page].importance, options_.learning);
  }
  return shard::FitPage(host_[host_of_[page]], model_[page].importance, options_.learning,
                        options_.host, &learning_[page]);
}

shard::LearningOptions LearningScheduler::PageOptions(int page) const {
  if (!options_.host_pooling) return options_.learning;
  return shard::PageLearningOptions(learning_[page], host_[host_of_[page]], options_.learning,
                                    options_.host);
}

void LearningScheduler::RerankHost(int host, int except_page) {
  for (const int32_t q : host_pages_[host]) {
    if (q == except_page) continue;
    const shard::LearnedModel fit = FitModel(q);
    if (!fit.ok || !shard::ChangedMeaningfully(model_[q], fit.params, options_.push_threshold)) {
      continue;
    }
    if (!values_->UpdateModel(q, IndexView(fit.params, options_.min_signal_precision)).ok()) {
      ++rejected_;
      continue;
    }
    model_[q] = fit.params;
    ++updates_;
  }
}

LearningScheduler::LearningScheduler(std::unique_ptr<ValueScheduler> values,
                                     std::vector<policy::PageParams> model,
                                     std::vector<shard::LearningState> learning,
                                     const LearningSchedulerOptions& options)
    : values_(std::move(values)),
      model_(std::move(model)),
      learning_(std::move(learning)),
      last_crawl_(model_.size(), 0.0),
      n_cis_(model_.size(), 0),
      options_(options),
      probes_(options.learning) {}

void LearningScheduler::OnSignal(int page, double t) {
  // The crawler counts every signal for learning (n_cis of App. E), whether
  // or not the current belief ranks by them.
  const int64_t n = ++n_cis_[page];
  values_->OnSignal(page, t);
  if (!options_.learn || !shard::SignalCountRefreshesRate(n)) return;
  // As Shard::RankBySignalRate: the page's signal rate with the open
  // interval counted.
  const double rate = shard::SignalRate(learning_[page], static_cast<double>(n),
                                        t - last_crawl_[page], PageOptions(page));
  const policy::PageParams ranked = shard::WithSignalRate(model_[page], rate);
  if (!shard::ChangedMeaningfully(model_[page], ranked, options_.push_threshold)) return;
  if (!values_->UpdateModel(page, IndexView(ranked, options_.min_signal_precision)).ok()) {
    ++rejected_;
    return;
  }
  model_[page] = ranked;
}

int LearningScheduler::Next(double t) {
  // As Shard::Lease: a due probe takes the slot unless it is moot.
  shard::PageId page = 0;
  if (probes_.TakeDue(t, values_->index(), &page)) return static_cast<int>(page);
  const int next = values_->Next(t);
  if (next != kIdle) probes_.ObservePick(values_->last_value());
  return next;
}

void LearningScheduler::OnCrawl(int page, double t, bool changed) {
  values_->OnCrawl(page, t, changed);
  const double tau = t - last_crawl_[page];
  const int64_t n_cis = n_cis_[page];
  last_crawl_[page] = t;
  n_cis_[page] = 0;
  if (!options_.learn) return;
  // App. E: the outcome z = changed over (τ_elap, n_cis) enters the
  // likelihood of θ = (α, αβ); the fit is its maximum with the prior's
  // pseudo-crawls. t_delay = 0: no signal is discarded here.
  if (!shard::LearnFromCrawl(tau, n_cis, changed, /*t_delay=*/0.0, &learning_[page])) {
    ++rejected_;
    return;
  }
  // The same outcome pooled into the host (the page's own state accepted
  // it, so the host's does).
  const bool host_refitted =
      options_.host_pooling &&
      shard::LearnHostFromCrawl(tau, n_cis, changed, /*t_delay=*/0.0, options_.learning,
                                options_.host,
                                &host_[host_of_[page]]) == shard::HostUpdate::kRefitted;
  if (host_refitted) {
    ++host_refits_;
    RerankHost(host_of_[page], page);
  }
  const shard::LearnedModel fit = FitModel(page);
  if (!fit.ok) {
    ++rejected_;
    return;
  }
  if (shard::RerankAfterCrawl(learning_[page], n_cis, model_[page], fit.params,
                              options_.push_threshold)) {
    if (!values_->UpdateModel(page, IndexView(fit.params, options_.min_signal_precision)).ok()) {
      ++rejected_;
      return;
    }
    model_[page] = fit.params;
    ++updates_;
  }
  probes_.AfterCrawl(static_cast<uint32_t>(page), t, tau, changed, learning_[page], model_[page]);
}

}  // namespace sim
}  // namespace recrawl
