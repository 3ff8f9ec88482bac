// `recrawl_sim fig12` (main paper App. D), `recrawl_sim appE` (App. E) and
// `recrawl_sim learn` (learning_experiment.h): run the experiment, print its markdown table, and
// optionally write the long-form CSV and the plot (report.h).
#ifndef RECRAWL_SIM_APPENDIX_COMMANDS_H_
#define RECRAWL_SIM_APPENDIX_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "sim/experiment_command.h"
#include "sim/world.h"

namespace recrawl {
namespace sim {

// o.experiment is ignored; o.run and o.overrides must be valid (reps and
// threads >= 1).
absl::Status RunBandwidthCommand(const ExperimentCommandOptions& o, std::ostream& out);
absl::Status RunEstimatorCommand(const ExperimentCommandOptions& o, std::ostream& out);
// `worlds`: "fig6" and/or "semi".
// `hosts`: host structure for every world (off by default).
absl::Status RunLearningCommand(const ExperimentCommandOptions& o,
                                const std::vector<std::string>& worlds, std::ostream& out,
                                const HostStructure& hosts = {});

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_APPENDIX_COMMANDS_H_
