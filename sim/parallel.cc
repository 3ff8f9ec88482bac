#include "sim/parallel.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace recrawl {
namespace sim {

absl::Status ForEachTask(size_t num_tasks, int threads,
                         const std::function<absl::Status(size_t)>& task) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  absl::Status status;
  auto worker = [&] {
    for (size_t t = next++; t < num_tasks; t = next++) {
      absl::Status st = task(t);
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (status.ok()) status = st;
        next = num_tasks;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int i = 0; i < std::max(1, threads); ++i) pool.emplace_back(worker);
  for (auto& th : pool) th.join();
  return status;
}

}  // namespace sim
}  // namespace recrawl
