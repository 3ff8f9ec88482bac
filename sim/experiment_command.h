// `recrawl_sim fig3|fig4|fig6|fig11|semi`: runs a paper experiment, prints
// its markdown table, and optionally writes the long-form CSV and a plot.
#ifndef RECRAWL_SIM_EXPERIMENT_COMMAND_H_
#define RECRAWL_SIM_EXPERIMENT_COMMAND_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "sim/experiment.h"
#include "sim/paper_experiments.h"

namespace recrawl {
namespace sim {

struct ExperimentCommandOptions {
  std::string experiment;
  RunOptions run;
  ExperimentOverrides overrides;
  std::string csv;   // empty: none
  std::string plot;  // empty: none
};

absl::Status RunExperimentCommand(const ExperimentCommandOptions& o, std::ostream& out);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_EXPERIMENT_COMMAND_H_
