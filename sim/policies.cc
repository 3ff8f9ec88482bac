#include "sim/policies.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "policy/crawl_policy.h"
#include "policy/lambda_crawl.h"
#include "policy/optimal_policy.h"
#include "sim/adaptive_schedulers.h"
#include "sim/rate_schedulers.h"

namespace recrawl {
namespace sim {
namespace {

// App. C: T_DELAY = 5/R.
constexpr double kDiscardSlots = 5.0;
// LambdaCrawl needs μ, Δ > 0; pages outside get this instead (they then get
// a negligible rate, as they would in the limit).
constexpr double kTinyRate = 1e-12;

absl::StatusOr<std::unique_ptr<Scheduler>> Values(
    const std::vector<policy::PageParams>& pages,
    const std::vector<policy::CrawlPolicy>& per_page,
    ValueSchedulerOptions options) {
  // μ̃: importance normalised to sum 1 (the argmax does not depend on it,
  // but the values the index reports are then the paper's).
  double total = 0;
  for (const auto& p : pages) total += p.importance;
  std::vector<policy::PageParams> normalised = pages;
  for (auto& p : normalised) p.importance = total > 0 ? p.importance / total : 0.0;
  absl::StatusOr<std::unique_ptr<ValueScheduler>> s =
      ValueScheduler::Create(normalised, per_page, options);
  if (!s.ok()) return s.status();
  return std::unique_ptr<Scheduler>(*std::move(s));
}

}  // namespace

const std::vector<std::string>& PolicyNames() {
  static const auto* names = new std::vector<std::string>{
      "BASELINE",   "BASELINE-NCIS", "GREEDY",      "GREEDY-CIS",          "GREEDY-NCIS",
      "G-NCIS-APPROX-1", "G-NCIS-APPROX-2", "GREEDY-NCIS-D", "GREEDY-CIS+", "LDS",
      "LAMBDACRAWL", "ROUND-ROBIN",  "CHANGE-PROPORTIONAL", "NUTCH",     "STORMCRAWLER"};
  return *names;
}

bool IsAnalytic(const std::string& name) {
  return name == "BASELINE" || name == "BASELINE-NCIS";
}

bool HighQualitySignals(const policy::PageParams& page) {
  absl::StatusOr<policy::PageModel> m = policy::PageModel::Create(page);
  return m.ok() && m->precision() > 0.7 && page.recall > 0.6;
}

absl::StatusOr<std::unique_ptr<Scheduler>> MakeScheduler(
    const std::string& name, const std::vector<policy::PageParams>& pages, double bandwidth,
    ValueSchedulerOptions::Argmax argmax) {
  const int m = static_cast<int>(pages.size());
  ValueSchedulerOptions options;
  options.argmax = argmax;
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
  if (name == "GREEDY-CIS+") {
    std::vector<policy::CrawlPolicy> per_page;
    for (const auto& p : pages) {
      per_page.push_back(HighQualitySignals(p) ? policy::CrawlPolicy::GreedyCis()
                                               : policy::CrawlPolicy::Greedy());
    }
    return Values(pages, per_page, options);
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
