#include "sim/solve_command.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "policy/lambda_crawl.h"
#include "policy/optimal_policy.h"

namespace recrawl {
namespace sim {
namespace {

// One output row: exactly one of rate / probability is set.
struct Row {
  std::optional<double> rate;
  std::optional<double> probability;
};

void Print(const std::vector<Row>& rows, double objective, std::ostream& out) {
  out << "index,rate,probability\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    out << i << "," << (rows[i].rate ? absl::StrFormat("%.17g", *rows[i].rate) : "") << ","
        << (rows[i].probability ? absl::StrFormat("%.17g", *rows[i].probability) : "") << "\n";
  }
  out << absl::StrFormat("# objective=%.17g\n", objective);
}

std::vector<Row> RateRows(const std::vector<double>& rates) {
  std::vector<Row> rows(rates.size());
  for (size_t i = 0; i < rates.size(); ++i) rows[i].rate = rates[i];
  return rows;
}

absl::Status SolveLambdaCrawl(const SolveOptions& options, const std::vector<PageRow>& pages,
                              std::ostream& out) {
  std::vector<policy::LambdaCrawlPage> lc(pages.size());
  for (size_t i = 0; i < pages.size(); ++i) {
    lc[i] = {pages[i].params.importance, pages[i].params.change_rate, pages[i].complete_obs};
  }
  absl::StatusOr<policy::LambdaCrawlSolution> solution;
  if (options.solver == "lambdacrawl") {
    solution = policy::LambdaCrawl(lc, options.bandwidth);
  } else if (options.solver == "lambdacrawl_incompl") {
    solution = policy::LambdaCrawlIncomplObs(lc, options.bandwidth);
  } else {
    solution = policy::LambdaCrawlComplObs(lc, options.bandwidth);
  }
  if (!solution.ok()) return solution.status();
  std::vector<Row> rows(pages.size());
  for (size_t i = 0; i < pages.size(); ++i) {
    const policy::CrawlAllocation& a = solution->pages[i];
    if (a.complete_observation) {
      rows[i].probability = a.probability;
    } else {
      rows[i].rate = a.rate;
    }
  }
  absl::StatusOr<double> cost = policy::HarmonicCost(lc, solution->pages);
  if (!cost.ok()) return cost.status();
  Print(rows, *cost / static_cast<double>(pages.size()), out);
  return absl::OkStatus();
}

}  // namespace

absl::Status RunSolve(const SolveOptions& options, const std::vector<PageRow>& pages,
                      std::ostream& out) {
  if (!(options.bandwidth > 0.0) || std::isinf(options.bandwidth)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--bandwidth must be a finite number > 0, got ", options.bandwidth));
  }
  if (pages.empty()) {
    return absl::InvalidArgumentError("--pages has no pages");
  }
  std::vector<policy::PageParams> params(pages.size());
  for (size_t i = 0; i < pages.size(); ++i) params[i] = pages[i].params;

  if (options.solver == "baseline" || options.solver == "baseline_ncis") {
    absl::StatusOr<policy::ContinuousPolicy> solution =
        options.solver == "baseline" ? policy::SolveNoSignalBaseline(params, options.bandwidth)
                                     : policy::SolveWithSignals(params, options.bandwidth);
    if (!solution.ok()) return solution.status();
    Print(RateRows(solution->rates), solution->accuracy, out);
    return absl::OkStatus();
  }
  if (options.solver == "azar2") {
    absl::StatusOr<policy::RandomizedPolicy> solution =
        policy::SolveAzarRandomized(params, options.bandwidth);
    if (!solution.ok()) return solution.status();
    Print(RateRows(solution->rates), solution->randomized_accuracy, out);
    return absl::OkStatus();
  }
  if (options.solver == "lambdacrawl" || options.solver == "lambdacrawl_incompl" ||
      options.solver == "lambdacrawl_compl") {
    return SolveLambdaCrawl(options, pages, out);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--solver must be one of baseline, baseline_ncis, azar2, lambdacrawl, "
                   "lambdacrawl_incompl, lambdacrawl_compl; got '",
                   options.solver, "'"));
}

}  // namespace sim
}  // namespace recrawl
