// The clock flags both servers take (--time_scale, --time_origin,
// --time_epoch), read into the Clock their core runs on.
#ifndef RECRAWL_SERVICES_CLOCK_FLAGS_H_
#define RECRAWL_SERVICES_CLOCK_FLAGS_H_

#include "absl/status/statusor.h"
#include "services/clock.h"

namespace recrawl {
namespace services {

// Real time by default; with --time_scale, scaled time that shows
// --time_origin (default: Unix time now) at Unix time --time_epoch (default:
// now). InvalidArgument naming the flag for a bad value.
absl::StatusOr<Clock> ClockFromFlags();

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_CLOCK_FLAGS_H_
