#include "sim/policies.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "policy/crawl_policy.h"
#include "policy/lambda_crawl.h"
#include "policy/optimal_policy.h"
#include "sim/adaptive_schedulers.h"
#include "sim/learning_scheduler.h"
#include "sim/rate_schedulers.h"
#include "sim/sharded_scheduler.h"

namespace recrawl {
namespace sim {
namespace {

// App. C: T_DELAY = 5/R.
constexpr double kDiscardSlots = 5.0;
// LambdaCrawl needs μ, Δ > 0; pages outside get this instead (they then get
// a negligible rate, as they would in the limit).
constexpr double kTinyRate = 1e-12;

absl::StatusOr<std::unique_ptr<Scheduler>> Values(const std::vector<policy::PageParams>& pages,
                                                  const std::vector<policy::CrawlPolicy>& per_page,
                                                  ValueSchedulerOptions options) {
  absl::StatusOr<std::unique_ptr<ValueScheduler>> s =
      ValueScheduler::Create(NormalisedImportance(pages), per_page, options);
  if (!s.ok()) return s.status();
  return std::unique_ptr<Scheduler>(*std::move(s));
}

// The prior of the learning policies: every page starts at the population
// means of (Δ, λ, ν), which an operator can know from a sample of pages
// without knowing any single page; importance is each page's own.
std::vector<policy::PageParams> PopulationPrior(const std::vector<policy::PageParams>& pages) {
  policy::PageParams mean;
  for (const auto& p : pages) {
    mean.change_rate += p.change_rate;
    mean.recall += p.recall;
    mean.false_rate += p.false_rate;
  }
  if (!pages.empty()) {
    mean.change_rate /= pages.size();
    mean.recall /= pages.size();
    mean.false_rate /= pages.size();
  }
  std::vector<policy::PageParams> out(pages.size(), mean);
  for (size_t i = 0; i < pages.size(); ++i) out[i].importance = pages[i].importance;
  return out;
}

// shard/shard.h's ShardOptions defaults, per second: Δ₀ = 1/86400,
// λ₀ = 0.5, ν₀ = 0.1/86400; here per day, the simulator's time unit read as
// a day (fig6's Δ ~ U[0, 1] is then up to one change a day).
std::vector<policy::PageParams> ShardDefaultPrior(const std::vector<policy::PageParams>& pages) {
  std::vector<policy::PageParams> out(pages.size());
  for (size_t i = 0; i < pages.size(); ++i) out[i] = {pages[i].importance, 1.0, 0.5, 0.1};
  return out;
}

absl::StatusOr<std::unique_ptr<Scheduler>> Learning(const std::vector<policy::PageParams>& priors,
                                                    policy::CrawlPolicy valuation, bool learn,
                                                    ValueSchedulerOptions::Argmax argmax,
                                                    const std::vector<int32_t>& hosts = {},
                                                    std::optional<HostPriorWeights> weights = {}) {
  LearningSchedulerOptions options;
  if (weights.has_value()) {
    options.host.max_prior_weight = weights->change;
    options.host.max_signal_prior_weight = weights->signal;
  }
  options.policy = valuation;
  options.learn = learn;
  options.argmax = argmax;
  options.target_candidates = CandidatesForPages(priors.size());
  options.host_pooling = !hosts.empty();
  absl::StatusOr<std::unique_ptr<LearningScheduler>> s =
      LearningScheduler::Create(priors, options, hosts);
  if (!s.ok()) return s.status();
  return std::unique_ptr<Scheduler>(*std::move(s));
}

}  // namespace

const std::vector<std::string>& PolicyNames() {
  static const auto* names = new std::vector<std::string>{"BASELINE",
                                                          "BASELINE-NCIS",
                                                          "GREEDY",
                                                          "GREEDY-CIS",
                                                          "GREEDY-NCIS",
                                                          "G-NCIS-APPROX-1",
                                                          "G-NCIS-APPROX-2",
                                                          "GREEDY-NCIS-D",
                                                          "GREEDY-CIS+",
                                                          "LDS",
                                                          "LAMBDACRAWL",
                                                          "ROUND-ROBIN",
                                                          "CHANGE-PROPORTIONAL",
                                                          "NUTCH",
                                                          "STORMCRAWLER",
                                                          "GREEDY-NCIS-LEARN",
                                                          "GREEDY-NCIS-LEARN-HOST",
                                                          "GREEDY-NCIS-LEARN-HOST-A32-G8",
                                                          "GREEDY-LEARN",
                                                          "GREEDY-NCIS-PRIOR",
                                                          "GREEDY-NCIS-LEARN-DEFAULT",
                                                          "SHARDED-MERGE",
                                                          "SHARDED-ADAPTIVE",
                                                          "SHARDED-EQUAL"};
  return *names;
}

bool IsAnalytic(const std::string& name) { return name == "BASELINE" || name == "BASELINE-NCIS"; }

std::optional<HostPriorWeights> ParseHostPriorWeights(const std::string& name) {
  constexpr absl::string_view kPrefix = "GREEDY-NCIS-LEARN-HOST-A";
  if (!absl::StartsWith(name, kPrefix)) return std::nullopt;
  const std::vector<std::string> parts =
      absl::StrSplit(absl::string_view(name).substr(kPrefix.size()), "-G");
  HostPriorWeights w;
  if (parts.size() != 2 || !absl::SimpleAtod(parts[0], &w.change) ||
      !absl::SimpleAtod(parts[1], &w.signal)) {
    return std::nullopt;
  }
  for (const double v : {w.change, w.signal}) {
    if (!(v >= 0.0) || !std::isfinite(v)) return std::nullopt;
  }
  return w;
}

bool IsHostPooledLearner(const std::string& name) {
  return name == "GREEDY-NCIS-LEARN-HOST" || ParseHostPriorWeights(name).has_value();
}

bool HighQualitySignals(const policy::PageParams& page) {
  absl::StatusOr<policy::PageModel> m = policy::PageModel::Create(page);
  return m.ok() && m->precision() > 0.7 && page.recall > 0.6;
}

absl::StatusOr<std::unique_ptr<Scheduler>> MakeScheduler(
    const std::string& name, const std::vector<policy::PageParams>& pages, double bandwidth,
    ValueSchedulerOptions::Argmax argmax, const std::vector<int32_t>& hosts) {
  const int m = static_cast<int>(pages.size());
  ValueSchedulerOptions options;
  options.argmax = argmax;
  options.target_candidates = CandidatesForPages(pages.size());
  auto all = [&](policy::CrawlPolicy p) { return std::vector<policy::CrawlPolicy>(m, p); };
  if (name == "GREEDY") return Values(pages, all(policy::CrawlPolicy::Greedy()), options);
  if (name == "GREEDY-CIS") return Values(pages, all(policy::CrawlPolicy::GreedyCis()), options);
  if (name == "GREEDY-NCIS") return Values(pages, all(policy::CrawlPolicy::GreedyNcis()), options);
  if (name == "GREEDY-NCIS-D") {
    options.discard_window = kDiscardSlots / bandwidth;
    return Values(pages, all(policy::CrawlPolicy::GreedyNcis()), options);
  }
  if (absl::StartsWith(name, "G-NCIS-APPROX-")) {
    int j;
    if (!absl::SimpleAtoi(name.substr(14), &j) || j < 1) {
      return absl::InvalidArgumentError(absl::StrCat("policy '", name, "': bad J"));
    }
    return Values(pages, all(policy::CrawlPolicy::Approx(j)), options);
  }
  if (absl::StartsWith(name, "SHARDED-")) {
    // GREEDY-NCIS on 4 shards, page i on shard i % 4 (the coordinator's
    // modes, sharded_scheduler.h). Importance is normalised over all pages.
    ShardedOptions sharded;
    const std::string mode = name.substr(8);
    if (mode == "MERGE") {
      sharded.mode = coordinator::Mode::kMerge;
    } else if (mode == "ADAPTIVE") {
      sharded.mode = coordinator::Mode::kSplitAdaptive;
    } else if (mode == "EQUAL") {
      sharded.mode = coordinator::Mode::kSplitEqual;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("policy '", name, "': unknown mode"));
    }
    std::vector<int> shard_of(m);
    for (int i = 0; i < m; ++i) shard_of[i] = i % sharded.num_shards;
    absl::StatusOr<std::unique_ptr<ShardedScheduler>> s =
        ShardedScheduler::Create(NormalisedImportance(pages), shard_of,
                                 policy::CrawlPolicy::GreedyNcis(), bandwidth, sharded);
    if (!s.ok()) return s.status();
    return std::unique_ptr<Scheduler>(*std::move(s));
  }
  if (name == "GREEDY-CIS+") {
    std::vector<policy::CrawlPolicy> per_page;
    for (const auto& p : pages) {
      per_page.push_back(HighQualitySignals(p) ? policy::CrawlPolicy::GreedyCis()
                                               : policy::CrawlPolicy::Greedy());
    }
    return Values(pages, per_page, options);
  }
  if (name == "GREEDY-NCIS-LEARN") {
    return Learning(PopulationPrior(pages), policy::CrawlPolicy::GreedyNcis(), true, argmax);
  }
  if (IsHostPooledLearner(name)) {
    if (hosts.size() != pages.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " needs the pages' hosts (learn --pages_per_host)"));
    }
    return Learning(PopulationPrior(pages), policy::CrawlPolicy::GreedyNcis(), true, argmax, hosts,
                    ParseHostPriorWeights(name));
  }
  if (name == "GREEDY-LEARN") {
    return Learning(PopulationPrior(pages), policy::CrawlPolicy::Greedy(), true, argmax);
  }
  if (name == "GREEDY-NCIS-PRIOR") {
    return Learning(PopulationPrior(pages), policy::CrawlPolicy::GreedyNcis(), false, argmax);
  }
  if (name == "GREEDY-NCIS-LEARN-DEFAULT") {
    return Learning(ShardDefaultPrior(pages), policy::CrawlPolicy::GreedyNcis(), true, argmax);
  }
  if (name == "ROUND-ROBIN") return std::make_unique<RoundRobinScheduler>(m);
  if (name == "NUTCH" || name == "STORMCRAWLER") {
    const auto kind = name == "NUTCH" ? AdaptiveIntervalRule::Kind::kNutch
                                      : AdaptiveIntervalRule::Kind::kStormCrawler;
    return std::make_unique<AdaptiveIntervalScheduler>(
        m, AdaptiveIntervalRule::Defaults(kind, m, bandwidth));
  }
  std::vector<double> rates;
  if (name == "LDS") {
    absl::StatusOr<policy::ContinuousPolicy> b = policy::SolveNoSignalBaseline(pages, bandwidth);
    if (!b.ok()) return b.status();
    rates = b->rates;
  } else if (name == "LAMBDACRAWL") {
    std::vector<policy::LambdaCrawlPage> lc;
    for (const auto& p : pages) {
      lc.push_back({std::max(p.importance, kTinyRate), std::max(p.change_rate, kTinyRate), false});
    }
    absl::StatusOr<policy::LambdaCrawlSolution> s = policy::LambdaCrawlIncomplObs(lc, bandwidth);
    if (!s.ok()) return s.status();
    for (const auto& a : s->pages) rates.push_back(a.rate);
  } else if (name == "CHANGE-PROPORTIONAL") {
    for (const auto& p : pages) rates.push_back(p.change_rate);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown policy '", name, "'"));
  }
  absl::StatusOr<LdsRateScheduler> lds = LdsRateScheduler::Create(std::move(rates), bandwidth);
  if (!lds.ok()) return lds.status();
  return std::make_unique<LdsRateScheduler>(*std::move(lds));
}

absl::StatusOr<double> AnalyticAccuracy(const std::string& name,
                                        const std::vector<policy::PageParams>& pages,
                                        double bandwidth) {
  absl::StatusOr<policy::ContinuousPolicy> p;
  if (name == "BASELINE") {
    p = policy::SolveNoSignalBaseline(pages, bandwidth);
  } else if (name == "BASELINE-NCIS") {
    p = policy::SolveWithSignals(pages, bandwidth);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not an analytic policy"));
  }
  if (!p.ok()) return p.status();
  return p->accuracy;
}

}  // namespace sim
}  // namespace recrawl
