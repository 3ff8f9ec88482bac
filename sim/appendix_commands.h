// `recrawl_sim fig12` (main paper App. D) and `recrawl_sim appE` (App. E):
// run the experiment, print its markdown table, and optionally write the
// long-form CSV and the plot (report.h).
#ifndef RECRAWL_SIM_APPENDIX_COMMANDS_H_
#define RECRAWL_SIM_APPENDIX_COMMANDS_H_

#include <ostream>

#include "absl/status/status.h"
#include "sim/experiment_command.h"

namespace recrawl {
namespace sim {

// o.experiment is ignored; o.run and o.overrides must be valid (reps and
// threads >= 1).
absl::Status RunBandwidthCommand(const ExperimentCommandOptions& o, std::ostream& out);
absl::Status RunEstimatorCommand(const ExperimentCommandOptions& o, std::ostream& out);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_APPENDIX_COMMANDS_H_
