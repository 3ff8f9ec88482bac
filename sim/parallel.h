// Runs independent tasks on a fixed number of threads. Experiments make every
// task a pure function of its index (and the seed), so their results do not
// depend on the number of threads.
#ifndef RECRAWL_SIM_PARALLEL_H_
#define RECRAWL_SIM_PARALLEL_H_

#include <cstddef>
#include <functional>

#include "absl/status/status.h"

namespace recrawl {
namespace sim {

// Calls task(0), ..., task(num_tasks − 1) on max(1, threads) threads, in
// increasing index order of hand-out. After the first error no new task is
// started; that error is returned.
absl::Status ForEachTask(size_t num_tasks, int threads,
                         const std::function<absl::Status(size_t)>& task);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_PARALLEL_H_
