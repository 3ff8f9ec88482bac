#include "sim/experiment_command.h"

#include "absl/strings/str_format.h"

namespace recrawl {
namespace sim {

absl::Status RunExperimentCommand(const ExperimentCommandOptions& o, std::ostream& out) {
  if (o.run.reps < 1) return absl::InvalidArgumentError("--reps must be at least 1");
  if (o.run.threads < 1) return absl::InvalidArgumentError("--threads must be at least 1");
  absl::StatusOr<Experiment> e = PaperExperiment(o.experiment, o.overrides);
  if (!e.ok()) return e.status();
  absl::StatusOr<ExperimentResult> r = RunExperiment(*e, o.run);
  if (!r.ok()) return r.status();
  out << "## " << e->title << "\n\n";
  PrintMarkdown(*e, *r, out);
  out << absl::StrFormat("\n%d repetitions, seed %d, %d threads, %.1f s\n", o.run.reps, o.run.seed,
                         o.run.threads, r->seconds);
  if (!o.csv.empty()) {
    if (absl::Status s = WriteCsv(*e, *r, o.csv); !s.ok()) return s;
  }
  if (!o.plot.empty()) {
    if (absl::Status s = WritePlot(*e, *r, o.plot); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace sim
}  // namespace recrawl
