#include "services/clock_flags.h"

#include <cmath>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

ABSL_FLAG(double, time_scale, 1.0,
          "Clock seconds per real second (demos and tests run days in "
          "minutes); every process of a cluster must use the same");
ABSL_FLAG(double, time_origin, -1.0, "Clock time at --time_epoch (< 0: Unix time at start)");
ABSL_FLAG(double, time_epoch, -1.0,
          "Unix time at which the clock showed --time_origin (< 0: at start). "
          "Processes given the same origin and epoch share one scaled time, "
          "also across restarts");

namespace recrawl {
namespace services {

absl::StatusOr<Clock> ClockFromFlags() {
  const double scale = absl::GetFlag(FLAGS_time_scale);
  if (!(std::isfinite(scale) && scale > 0.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--time_scale: must be finite and > 0, got ", scale));
  }
  const double now = Clock::UnixNow();
  double origin = absl::GetFlag(FLAGS_time_origin);
  double epoch = absl::GetFlag(FLAGS_time_epoch);
  if (!std::isfinite(origin)) {
    return absl::InvalidArgumentError("--time_origin: must be finite");
  }
  if (!std::isfinite(epoch) || epoch > now) {
    return absl::InvalidArgumentError(
        absl::StrCat("--time_epoch: must be a finite Unix time not in the future, got ", epoch));
  }
  if (origin < 0.0) origin = now;
  if (epoch < 0.0) epoch = now;
  return Clock(scale, origin, epoch);
}

}  // namespace services
}  // namespace recrawl
