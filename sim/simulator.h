// Runs a Scheduler on a realization: delivers each slot's signals, asks for
// the slot's page, reports whether its content changed since its last crawl,
// and logs the crawl (main paper Algorithm 1's loop, for any policy).
#ifndef RECRAWL_SIM_SIMULATOR_H_
#define RECRAWL_SIM_SIMULATOR_H_

#include "sim/metrics.h"
#include "sim/scheduler.h"
#include "sim/world.h"

namespace recrawl {
namespace sim {

CrawlLog RunScheduler(const Realization& world, int num_pages, Scheduler& scheduler);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_SIMULATOR_H_
