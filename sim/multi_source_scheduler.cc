#include "sim/multi_source_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "policy/multi_source_value.h"
#include "sim/scheduler.h"

namespace recrawl {
namespace sim {

namespace {

// The single-source belief of kTrusted about `truth` (whose sources are what
// the policy believes of them), and in *counted the sources it listens to.
policy::MultiSourceModel TrustedBelief(const policy::MultiSourceModel& truth, uint32_t* counted) {
  const std::vector<bool> trusted = truth.TrustedSources(kTrustedMinRelativeWeight);
  *counted = 0;
  for (size_t s = 0; s < trusted.size(); ++s) {
    if (trusted[s]) *counted |= 1u << s;
  }
  const policy::PageModel merged = truth.MergedOf(trusted);
  return *policy::MultiSourceModel::Create(
      {truth.importance(), truth.change_rate(), {{merged.recall(), merged.false_rate()}}});
}

// Signalling instants in `signals`, a joint event as one.
int64_t Instants(const policy::SourceSignals& signals) {
  int64_t n = signals.joint;
  for (int64_t c : signals.counts) n += c;
  return n;
}

}  // namespace

const std::vector<MultiSourcePolicy>& MultiSourcePolicies() {
  static const auto* policies = new std::vector<MultiSourcePolicy>{
      {"GREEDY", SignalView::kNone},
      {"GREEDY-NCIS-MERGED", SignalView::kMerged},
      {"GREEDY-NCIS-CDN-ONLY", SignalView::kFirstSourceOnly},
      {"GREEDY-NCIS-SOURCES", SignalView::kPerSource},
      {"GREEDY-NCIS-SOURCES-UNMATCHED", SignalView::kPerSourceUnmatched},
      {"GREEDY-NCIS-SOURCES-LEARNED", SignalView::kPerSourceLearned},
      {"GREEDY-NCIS-SOURCES-LEARNED-DELTA", SignalView::kPerSourceLearnedChangeRates},
      {"GREEDY-NCIS-SOURCES-LEARNED-FIT", SignalView::kPerSourceLearnedJointFit},
      {"GREEDY-NCIS-SOURCES-LEARNED-SOURCE-FIT", SignalView::kPerSourceLearnedSourceFit},
      {"GREEDY-NCIS-TRUSTED", SignalView::kTrusted},
      {"GREEDY-NCIS-TRUSTED-LEARNED", SignalView::kTrustedLearned},
      {"GREEDY-NCIS-TRUSTED-LEARNED-FIT", SignalView::kTrustedLearnedJointFit},
      {"GREEDY-NCIS-TRUSTED-LEARNED-RANKED-FIT", SignalView::kTrustedLearnedRankedFit},
  };
  return *policies;
}

policy::PageParams JointFitPrior() {
  const policy::SourceTrustPrior trust;
  policy::PageParams prior;
  prior.importance = 1.0;
  prior.change_rate = 0.5;
  prior.recall = trust.recall;
  prior.false_rate = trust.false_rate;
  return prior;
}

absl::StatusOr<std::unique_ptr<MultiSourceScheduler>> MultiSourceScheduler::Create(
    const std::vector<policy::MultiSourceParams>& pages, SignalView view, int pages_per_host) {
  if (pages_per_host < 1) return absl::InvalidArgumentError("pages_per_host must be >= 1");
  std::vector<policy::MultiSourceModel> beliefs;
  beliefs.reserve(pages.size());
  std::vector<uint32_t> counted(pages.size(), 0);
  const int num_sources = pages.empty() ? 0 : static_cast<int>(pages[0].sources.size());
  for (const policy::MultiSourceParams& page : pages) {
    absl::StatusOr<policy::MultiSourceModel> truth = policy::MultiSourceModel::Create(page);
    if (!truth.ok()) return truth.status();
    policy::MultiSourceParams belief{page.importance, page.change_rate, {}};
    switch (view) {
      case SignalView::kNone:
        break;
      case SignalView::kMerged: {
        const policy::PageModel merged = truth->Merged();
        belief.sources = {{merged.recall(), merged.false_rate()}};
        break;
      }
      case SignalView::kFirstSourceOnly:
        if (!page.sources.empty()) belief.sources = {page.sources[0]};
        break;
      case SignalView::kPerSource:
      case SignalView::kPerSourceUnmatched:
        belief.sources = page.sources;
        break;
      case SignalView::kPerSourceLearnedChangeRates:
        belief.change_rate = policy::ChangeRateEstimator().Estimate();
        [[fallthrough]];
      case SignalView::kPerSourceLearnedJointFit:
      case SignalView::kPerSourceLearnedSourceFit:
        if (view != SignalView::kPerSourceLearnedChangeRates) {
          belief.change_rate = JointFitPrior().change_rate;
        }
        [[fallthrough]];
      case SignalView::kPerSourceLearned: {
        const policy::SourceTrustPrior prior;
        belief.sources.assign(page.sources.size(), {prior.recall, prior.false_rate});
        break;
      }
      case SignalView::kTrusted:
        beliefs.push_back(TrustedBelief(*truth, &counted[beliefs.size()]));
        continue;
      case SignalView::kTrustedLearned:
      case SignalView::kTrustedLearnedJointFit:
      case SignalView::kTrustedLearnedRankedFit: {
        if (view != SignalView::kTrustedLearned) belief.change_rate = JointFitPrior().change_rate;
        if (static_cast<int>(page.sources.size()) != num_sources) {
          return absl::InvalidArgumentError(
              "pages must all have the same number of sources for a learned view");
        }
        const policy::SourceTrustPrior prior;
        belief.sources.assign(page.sources.size(), {prior.recall, prior.false_rate});
        beliefs.push_back(
            TrustedBelief(*policy::MultiSourceModel::Create(belief), &counted[beliefs.size()]));
        continue;
      }
    }
    beliefs.push_back(*policy::MultiSourceModel::Create(belief));
  }
  return std::unique_ptr<MultiSourceScheduler>(new MultiSourceScheduler(
      std::move(beliefs), std::move(counted), num_sources, view, pages_per_host));
}

MultiSourceScheduler::MultiSourceScheduler(std::vector<policy::MultiSourceModel> beliefs,
                                           std::vector<uint32_t> counted, int num_sources,
                                           SignalView view, int pages_per_host)
    : beliefs_(std::move(beliefs)),
      counted_(std::move(counted)),
      num_sources_(num_sources),
      view_(view),
      pages_(beliefs_.size()),
      pages_per_host_(pages_per_host) {
  if (LearnsTrust() && !beliefs_.empty()) {
    const size_t hosts = (beliefs_.size() + pages_per_host - 1) / pages_per_host;
    trust_.assign(hosts, policy::SourceTrustEstimator(num_sources_));
    next_refit_.assign(hosts, 10);
  }
  if (view_ == SignalView::kPerSourceLearnedChangeRates) change_rates_.resize(beliefs_.size());
  if (FitsLikeTheShard()) {
    fits_.assign(beliefs_.size(), shard::InitLearning(JointFitPrior()));
  }
  if (view_ == SignalView::kPerSourceLearnedSourceFit) {
    source_fits_.assign(beliefs_.size(),
                        policy::SourceChangeRateEstimator(
                            num_sources_, {JointFitPrior().change_rate, /*weight=*/1.0}));
  }
  for (size_t i = 0; i < pages_.size(); ++i) {
    Page& p = pages_[i];
    p.signals.counts.assign(beliefs_[i].num_sources(), 0);
    if (LearnsTrusted()) p.by_source.counts.assign(num_sources_, 0);
    const double delta = beliefs_[i].change_rate();
    p.ceiling = delta > 0.0 ? beliefs_[i].importance() / delta : 0.0;
    dirty_.push_back(static_cast<int>(i));
  }
}

void MultiSourceScheduler::OnSignal(int page, double t, uint32_t sources) {
  Page& p = pages_[page];
  switch (view_) {
    case SignalView::kNone:
      return;
    case SignalView::kMerged:
      ++p.signals.counts[0];
      break;
    case SignalView::kFirstSourceOnly:
      if ((sources & 1u) == 0) return;
      ++p.signals.counts[0];
      break;
    case SignalView::kPerSource:
    case SignalView::kPerSourceLearned:
    case SignalView::kPerSourceLearnedChangeRates:
    case SignalView::kPerSourceLearnedJointFit:
    case SignalView::kPerSourceLearnedSourceFit:
      if (__builtin_popcount(sources) >= 2) {
        ++p.signals.joint;
      } else {
        ++p.signals.counts[__builtin_ctz(sources)];
      }
      if (view_ == SignalView::kPerSourceLearnedSourceFit) {
        if (shard::SignalCountRefreshesRate(Instants(p.signals))) {
          SetChangeRate(page, SourceFitChangeRate(page, t, beliefs_[page].params().sources, false));
        }
      }
      break;
    case SignalView::kPerSourceUnmatched:
      for (uint32_t bits = sources; bits != 0; bits &= bits - 1) {
        ++p.signals.counts[__builtin_ctz(bits)];
      }
      break;
    case SignalView::kTrustedLearned:
    case SignalView::kTrustedLearnedJointFit:
    case SignalView::kTrustedLearnedRankedFit:
      if (__builtin_popcount(sources) >= 2) {
        ++p.by_source.joint;
      } else {
        ++p.by_source.counts[__builtin_ctz(sources)];
      }
      [[fallthrough]];
    case SignalView::kTrusted:
      if ((sources & counted_[page]) == 0) return;
      ++p.signals.counts[0];
      break;
  }
  if (!p.dirty) {
    p.dirty = true;
    dirty_.push_back(page);
  }
}

bool MultiSourceScheduler::LearnsTrust() const {
  return view_ == SignalView::kPerSourceLearned ||
         view_ == SignalView::kPerSourceLearnedChangeRates ||
         view_ == SignalView::kPerSourceLearnedJointFit ||
         view_ == SignalView::kPerSourceLearnedSourceFit || LearnsTrusted();
}

bool MultiSourceScheduler::FitsLikeTheShard() const {
  return view_ == SignalView::kPerSourceLearnedJointFit ||
         view_ == SignalView::kTrustedLearnedJointFit ||
         view_ == SignalView::kTrustedLearnedRankedFit;
}

bool MultiSourceScheduler::LearnsTrusted() const {
  return view_ == SignalView::kTrustedLearned || view_ == SignalView::kTrustedLearnedJointFit ||
         view_ == SignalView::kTrustedLearnedRankedFit;
}

std::optional<double> MultiSourceScheduler::LearnChangeRate(int page, double tau, bool changed) {
  if (view_ == SignalView::kPerSourceLearnedChangeRates) {
    if (!change_rates_[page].Add(tau, changed).ok()) return std::nullopt;
    return change_rates_[page].Estimate();
  }
  if (FitsLikeTheShard()) {
    // Every signalling instant, or the trusted sources' only (counted in
    // `signals` by the trusted views).
    const policy::SourceSignals& signals = view_ == SignalView::kTrustedLearnedJointFit
                                               ? pages_[page].by_source
                                               : pages_[page].signals;
    if (!shard::LearnFromCrawl(tau, Instants(signals), changed, /*t_delay=*/0.0, &fits_[page])) {
      return std::nullopt;
    }
    const shard::LearnedModel fit =
        shard::Fit(fits_[page], beliefs_[page].importance(), shard::LearningOptions());
    if (!fit.ok) return std::nullopt;
    return fit.estimate.change_rate;
  }
  if (view_ == SignalView::kPerSourceLearnedSourceFit) {
    if (!source_fits_[page].Add(tau, pages_[page].signals, changed).ok()) return std::nullopt;
    return SourceFitChangeRate(page, pages_[page].last_crawl + tau, beliefs_[page].params().sources,
                               true);
  }
  return std::nullopt;
}

double MultiSourceScheduler::SourceFitChangeRate(int page, double t,
                                                 const std::vector<policy::SourceParams>& sources,
                                                 bool closed) const {
  const Page& p = pages_[page];
  policy::OpenInterval open;
  if (!closed) open = {t - p.last_crawl, &p.signals};
  return source_fits_[page].Estimate(sources, beliefs_[page].change_rate(), open);
}

void MultiSourceScheduler::SetChangeRate(int page, double change_rate) {
  policy::MultiSourceParams params = beliefs_[page].params();
  params.change_rate = change_rate;
  absl::StatusOr<policy::MultiSourceModel> model = policy::MultiSourceModel::Create(params);
  if (model.ok()) SetBelief(page, *std::move(model));
}

void MultiSourceScheduler::SetBelief(int page, policy::MultiSourceModel belief) {
  beliefs_[page] = std::move(belief);
  Page& p = pages_[page];
  const double delta = beliefs_[page].change_rate();
  p.ceiling = delta > 0.0 ? beliefs_[page].importance() / delta : 0.0;
  if (!p.dirty) {
    p.dirty = true;
    dirty_.push_back(page);
  }
}

void MultiSourceScheduler::Learn(int page, double t, bool changed) {
  const int host = page / pages_per_host_;
  const Page& p = pages_[page];
  const double tau = t - p.last_crawl;
  if (const std::optional<double> delta = LearnChangeRate(page, tau, changed); delta.has_value()) {
    SetChangeRate(page, *delta);
  }
  const policy::SourceSignals& by_source = LearnsTrusted() ? p.by_source : p.signals;
  policy::SourceTrustEstimator& trust = trust_[host];
  if (!trust.Add(beliefs_[page].change_rate(), tau, by_source, changed).ok()) {
    return;  // an outcome the model rules out (cannot happen in the simulator)
  }
  if (trust.num_crawls() < next_refit_[host]) return;
  next_refit_[host] = next_refit_[host] < 160 ? 2 * next_refit_[host] : next_refit_[host] + 200;
  const policy::SourceTrustEstimate estimate = trust.Estimate();
  const int end = std::min<int>(static_cast<int>(pages_.size()), (host + 1) * pages_per_host_);
  for (int i = host * pages_per_host_; i < end; ++i) {
    policy::MultiSourceParams params = beliefs_[i].params();
    params.sources = estimate.sources;
    if (view_ == SignalView::kPerSourceLearnedSourceFit) {
      params.change_rate = SourceFitChangeRate(i, t, estimate.sources, /*closed=*/i == page);
    }
    absl::StatusOr<policy::MultiSourceModel> model = policy::MultiSourceModel::Create(params);
    if (!model.ok()) continue;
    SetBelief(i, LearnsTrusted() ? TrustedBelief(*model, &counted_[i]) : *std::move(model));
  }
}

void MultiSourceScheduler::OnCrawl(int page, double t, bool changed) {
  if (LearnsTrust()) Learn(page, t, changed);
  Page& p = pages_[page];
  std::fill(p.signals.counts.begin(), p.signals.counts.end(), 0);
  p.signals.joint = 0;
  std::fill(p.by_source.counts.begin(), p.by_source.counts.end(), 0);
  p.by_source.joint = 0;
  p.last_crawl = t;
  if (!p.dirty) {
    p.dirty = true;
    dirty_.push_back(page);
  }
}

void MultiSourceScheduler::Evaluate(int page, double t) {
  Page& p = pages_[page];
  const policy::ValueGrowth g =
      policy::MultiSourceValueGrowth(beliefs_[page], t - p.last_crawl, p.signals);
  p.value = g.value;
  p.slope = g.slope;
  p.slope_rise = g.slope_rise;
  p.evaluated_at = t;
  p.dirty = false;
  ++evaluations_;
}

double MultiSourceScheduler::Value(int page, double t) const {
  const Page& p = pages_[page];
  return policy::MultiSourceValue(beliefs_[page], t - p.last_crawl, p.signals);
}

double MultiSourceScheduler::Bound(const Page& p, double t) const {
  const double h = t - p.evaluated_at;
  return std::min(p.ceiling, p.value + p.slope * h + 0.5 * p.slope_rise * h * h);
}

int MultiSourceScheduler::Next(double t) {
  for (int page : dirty_) Evaluate(page, t);
  dirty_.clear();
  heap_.clear();
  for (size_t i = 0; i < pages_.size(); ++i) {
    heap_.emplace_back(Bound(pages_[i], t), static_cast<int>(i));
  }
  std::make_heap(heap_.begin(), heap_.end());
  int best = Scheduler::kIdle;
  double best_value = -std::numeric_limits<double>::infinity();
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end());
    const auto [bound, page] = heap_.back();
    heap_.pop_back();
    if (bound <= best_value) break;
    Page& p = pages_[page];
    if (p.evaluated_at != t) Evaluate(page, t);
    if (p.value > best_value) {
      best_value = p.value;
      best = page;
    }
  }
  return best;
}

absl::StatusOr<CrawlLog> RunMultiSource(const MultiSourceInstance& instance,
                                        const MultiSourceRealization& realization, SignalView view,
                                        int pages_per_host, int64_t* evaluations) {
  absl::StatusOr<std::unique_ptr<MultiSourceScheduler>> scheduler =
      MultiSourceScheduler::Create(instance.pages, view, pages_per_host);
  if (!scheduler.ok()) return scheduler.status();
  const Realization& world = realization.world;
  const int num_pages = static_cast<int>(instance.pages.size());
  std::vector<std::pair<int32_t, double>> crawls;
  crawls.reserve(world.slot_times.size());
  // Per page: index of the first change after now, and its value at the last
  // crawl (as RunScheduler).
  std::vector<int64_t> next_change(world.change_begin.begin(), world.change_begin.end() - 1);
  std::vector<int64_t> next_change_at_crawl = next_change;
  for (size_t j = 0; j < world.slot_times.size(); ++j) {
    const double t = world.slot_times[j];
    for (int64_t k = world.signal_begin[j]; k < world.signal_begin[j + 1]; ++k) {
      (*scheduler)
          ->OnSignal(world.signal_page[k], world.signal_time[k], realization.signal_sources[k]);
    }
    const int page = (*scheduler)->Next(t);
    if (page == Scheduler::kIdle) continue;
    int64_t& next = next_change[page];
    while (next < world.change_begin[page + 1] && world.change_times[next] <= t) ++next;
    const bool changed = next != next_change_at_crawl[page];
    next_change_at_crawl[page] = next;
    (*scheduler)->OnCrawl(page, t, changed);
    crawls.emplace_back(page, t);
  }
  if (evaluations != nullptr) *evaluations = (*scheduler)->evaluations();
  CrawlLog log;
  log.crawl_begin.assign(num_pages + 1, 0);
  for (const auto& c : crawls) ++log.crawl_begin[c.first + 1];
  for (int i = 0; i < num_pages; ++i) log.crawl_begin[i + 1] += log.crawl_begin[i];
  log.crawl_times.resize(crawls.size());
  std::vector<int64_t> fill(log.crawl_begin.begin(), log.crawl_begin.end() - 1);
  for (const auto& c : crawls) log.crawl_times[fill[c.first]++] = c.second;
  return log;
}

}  // namespace sim
}  // namespace recrawl
