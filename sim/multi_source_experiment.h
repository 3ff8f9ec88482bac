// The per-source trust experiment (docs/results.md, "Per-source trust"): in
// a world where every host has an accurate source and a noisy one
// (sim/multi_source_world.h), GREEDY-NCIS with per-source trust against
// today's single (λ, ν) on the merged stream, the accurate source alone,
// per-source weights without matching one change's signals, one (λ, ν) of the
// trusted sources only, and GREEDY; with the true parameters (oracle) and,
// for per-source trust and the trusted sources, with each host's (λ_s, ν_s)
// learned during the run. Every policy of a repetition runs on the
// same instance and realisation; accuracy is sim/metrics.h's share of
// requests served fresh over the run.
#ifndef RECRAWL_SIM_MULTI_SOURCE_EXPERIMENT_H_
#define RECRAWL_SIM_MULTI_SOURCE_EXPERIMENT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/multi_source_world.h"

namespace recrawl {
namespace sim {

struct MultiSourceExperimentOptions {
  std::vector<int> num_pages = {100, 1000, 10000};
  int reps = 20;
  uint64_t seed = 1;
  int threads = 2;
  MultiSourceWorldConfig world;  // num_pages is replaced by each entry above
  // Names of the policies to run (MultiSourcePolicies()), in that list's
  // order; empty: all. GREEDY-NCIS-MERGED, the table's reference, always
  // runs.
  std::vector<std::string> policies;
};

// accuracy[m index][policy index][rep], policies as MultiSourcePolicies().
struct MultiSourceResults {
  std::vector<int> num_pages;
  std::vector<std::string> policies;
  std::vector<std::vector<std::vector<double>>> accuracy;
  std::vector<std::vector<std::vector<double>>> wasted_share;
};

// InvalidArgument naming the first of `names` that MultiSourcePolicies()
// does not have.
absl::Status CheckPolicyNames(const std::vector<std::string>& names);

// InvalidArgument for reps or a page count below 1 or a policy name that
// CheckPolicyNames refuses.
absl::StatusOr<MultiSourceResults> RunMultiSourceExperiment(
    const MultiSourceExperimentOptions& options);

// Markdown table: per m and policy the mean accuracy ± standard error over
// repetitions, and the paired difference to GREEDY-NCIS-MERGED (today's
// single (λ, ν)) ± its standard error; then the share of wasted crawls.
void WriteMultiSourceTable(const MultiSourceResults& results, std::ostream& out);
// Long form: m,policy,rep,accuracy,wasted_share.
void WriteMultiSourceCsv(const MultiSourceResults& results, std::ostream& out);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_MULTI_SOURCE_EXPERIMENT_H_
