// `recrawl_sim solve`: an optimal continuous policy for a table of pages.
#ifndef RECRAWL_SIM_SOLVE_COMMAND_H_
#define RECRAWL_SIM_SOLVE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "sim/pages_csv.h"

namespace recrawl {
namespace sim {

struct SolveOptions {
  // baseline | baseline_ncis | azar2 | lambdacrawl | lambdacrawl_incompl |
  // lambdacrawl_compl
  std::string solver;
  double bandwidth = 0.0;  // R, crawls per unit time
};

// Solves and prints CSV `index,rate,probability` (one row per page in input
// order; a crawl rate for Poisson/periodically crawled pages, a
// crawl-on-signal probability for complete-observation pages, the other
// column empty) and a last line `# objective=<value>`: the expected accuracy
// for baseline, baseline_ncis and azar2 (Azar's randomized objective F2/Σμ),
// the harmonic cost averaged over pages (Σ μ_w cost_w / n) for the LambdaCrawl
// solvers. Numbers have 17 significant digits.
absl::Status RunSolve(const SolveOptions& options, const std::vector<PageRow>& pages,
                      std::ostream& out);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_SOLVE_COMMAND_H_
