// The policies the experiments compare, by the names the paper and the
// tables use (upper case). Discrete ones become a Scheduler; BASELINE and
// BASELINE-NCIS are optimal continuous policies scored analytically.
//
//   GREEDY, GREEDY-CIS, GREEDY-NCIS, G-NCIS-APPROX-J   Algorithm 1, Sec. 5.1
//   GREEDY-NCIS-D    GREEDY-NCIS discarding signals within 5/R of a crawl (App. C)
//   GREEDY-CIS+      GREEDY-CIS value where precision > 0.7 and recall > 0.6,
//                    GREEDY value elsewhere (Sec. 6.7)
//   GREEDY-NCIS-LEARN  GREEDY-NCIS on (Δ, λ, ν) learnt online per page by the
//                    shard's learner (learning_scheduler.h, App. E) from the
//                    population prior: the means of Δ, λ, ν over the pages
//   GREEDY-NCIS-LEARN-HOST  GREEDY-NCIS-LEARN whose pages are fitted with
//                    their host's pooled fit as prior (shard/host_learning.h);
//                    needs the pages' host ids
//   GREEDY-NCIS-LEARN-HOST-A<a>-G<g>  GREEDY-NCIS-LEARN-HOST whose host
//                    prior's weight is bounded by a pseudo-crawls in the
//                    likelihood of α and αβ and by g pseudo-intervals for γ
//                    (HostLearningOptions::max_prior_weight,
//                    max_signal_prior_weight), e.g. -A32-G8
//   GREEDY-LEARN     the same learning, ranked by the GREEDY value
//   GREEDY-NCIS-PRIOR  GREEDY-NCIS on the population prior, never learning
//   GREEDY-NCIS-LEARN-DEFAULT  GREEDY-NCIS-LEARN from the shard's default
//                    prior (Δ₀ = 1/day, λ₀ = 0.5, ν₀ = 0.1/day) with the
//                    simulator's time unit read as a day
//   LDS              BASELINE's rates (problem (5)) realised by Azar Alg. 3
//   LAMBDACRAWL      Kolobov's LambdaCrawl-IncomplObs rates realised by LDS
//   ROUND-ROBIN, CHANGE-PROPORTIONAL, NUTCH, STORMCRAWLER   what crawlers run
//   BASELINE         problem (5): periodic crawling without signals
//   BASELINE-NCIS    Theorem 1: optimal threshold policies with signals
#ifndef RECRAWL_SIM_POLICIES_H_
#define RECRAWL_SIM_POLICIES_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/page_model.h"
#include "sim/scheduler.h"
#include "sim/value_scheduler.h"

namespace recrawl {
namespace sim {

// Every name MakeScheduler / AnalyticAccuracy accept, but for the
// parameterised families G-NCIS-APPROX-J (J >= 1) and
// GREEDY-NCIS-LEARN-HOST-A<a>-G<g>, of which a few are listed.
const std::vector<std::string>& PolicyNames();
bool IsAnalytic(const std::string& name);

// The host prior's bounds of a GREEDY-NCIS-LEARN-HOST-A<a>-G<g> name:
// a (max_prior_weight) and g (max_signal_prior_weight), both finite numbers
// >= 0. nullopt for any other name.
struct HostPriorWeights {
  double change = 0.0;
  double signal = 0.0;
};
std::optional<HostPriorWeights> ParseHostPriorWeights(const std::string& name);
// GREEDY-NCIS-LEARN-HOST or one of its -A<a>-G<g> variants: the learners
// that pool outcomes per host and need the pages' hosts.
bool IsHostPooledLearner(const std::string& name);

// A discrete policy for pages the policy believes to have `pages` parameters
// (raw importance), at bandwidth R (the rate-based policies plan for R; the
// value-based ones adapt to any slot times). The learning policies use only
// the pages' importance and the population means of their (Δ, λ, ν);
// `hosts` (page i's host id, or empty) is used by GREEDY-NCIS-LEARN-HOST and
// its -A<a>-G<g> variants only, which fail without one per page.
absl::StatusOr<std::unique_ptr<Scheduler>> MakeScheduler(
    const std::string& name, const std::vector<policy::PageParams>& pages, double bandwidth,
    ValueSchedulerOptions::Argmax argmax = ValueSchedulerOptions::Argmax::kLazyBound,
    const std::vector<int32_t>& hosts = {});

// Expected share of requests served fresh by BASELINE or BASELINE-NCIS.
absl::StatusOr<double> AnalyticAccuracy(const std::string& name,
                                        const std::vector<policy::PageParams>& pages,
                                        double bandwidth);

// GREEDY-CIS+'s split (Sec. 6.7).
bool HighQualitySignals(const policy::PageParams& page);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_POLICIES_H_
