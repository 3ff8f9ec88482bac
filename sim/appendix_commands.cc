#include "sim/appendix_commands.h"

#include "sim/bandwidth_experiment.h"
#include "sim/estimator_experiment.h"
#include "sim/learning_experiment.h"
#include "sim/report.h"

namespace recrawl {
namespace sim {

absl::Status RunBandwidthCommand(const ExperimentCommandOptions& o, std::ostream& out) {
  absl::StatusOr<BandwidthExperiment> e = Fig12Experiment(o.overrides);
  if (!e.ok()) return e.status();
  absl::StatusOr<BandwidthResult> r = RunBandwidthExperiment(*e, o.run);
  if (!r.ok()) return r.status();
  return EmitReport(BandwidthReport(*e, *r, o.run), o.csv, o.plot, out);
}

absl::Status RunEstimatorCommand(const ExperimentCommandOptions& o, std::ostream& out) {
  absl::StatusOr<EstimatorExperiment> e = AppendixEExperiment(o.overrides);
  if (!e.ok()) return e.status();
  absl::StatusOr<EstimatorResult> r = RunEstimatorExperiment(*e, o.run);
  if (!r.ok()) return r.status();
  return EmitReport(EstimatorReport(*e, *r, o.run), o.csv, o.plot, out);
}

absl::Status RunLearningCommand(const ExperimentCommandOptions& o,
                                const std::vector<std::string>& worlds, std::ostream& out,
                                const HostStructure& hosts) {
  absl::StatusOr<LearningExperiment> e = LearnExperiment(worlds, o.overrides, hosts);
  if (!e.ok()) return e.status();
  absl::StatusOr<LearningResult> r = RunLearningExperiment(*e, o.run);
  if (!r.ok()) return r.status();
  return EmitReport(LearningReport(*e, *r, o.run), o.csv, o.plot, out);
}

}  // namespace sim
}  // namespace recrawl
