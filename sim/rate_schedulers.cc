#include "sim/rate_schedulers.h"

#include <utility>

namespace recrawl {
namespace sim {

absl::StatusOr<LdsRateScheduler> LdsRateScheduler::Create(std::vector<double> rates,
                                                          double bandwidth) {
  double total = 0;
  for (double r : rates) total += r;
  if (total > 0) {
    for (double& r : rates) r *= bandwidth / total;
  }
  absl::StatusOr<policy::LdsScheduler> lds = policy::LdsScheduler::Create(rates, bandwidth);
  if (!lds.ok()) return lds.status();
  return LdsRateScheduler(*std::move(lds));
}

}  // namespace sim
}  // namespace recrawl
