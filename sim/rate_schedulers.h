// Schedulers that ignore the state of pages and realise fixed crawl rates:
// round-robin, and any rate vector realised by Azar et al.'s low-discrepancy
// EDF schedule (LDS with BASELINE's rates, LambdaCrawl's rates, or rates
// proportional to the change rates).
#ifndef RECRAWL_SIM_RATE_SCHEDULERS_H_
#define RECRAWL_SIM_RATE_SCHEDULERS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "policy/lds.h"
#include "sim/scheduler.h"

namespace recrawl {
namespace sim {

// Crawls pages 0, 1, ..., m−1, 0, 1, ... : every page every m/R.
class RoundRobinScheduler : public Scheduler {
 public:
  explicit RoundRobinScheduler(int num_pages) : num_pages_(num_pages) {}
  int Next(double t) override {
    if (num_pages_ == 0) return kIdle;
    const int page = next_;
    next_ = (next_ + 1) % num_pages_;
    return page;
  }

 private:
  int num_pages_;
  int next_ = 0;
};

// Page k gets slots at rate ρ_k (|t p_k − N_k(t)| <= 1, policy/lds.h).
class LdsRateScheduler : public Scheduler {
 public:
  // Rates are rescaled to sum to `bandwidth` (a solver's rates sum to it up
  // to rounding; proportional rates are given up to a factor).
  static absl::StatusOr<LdsRateScheduler> Create(std::vector<double> rates, double bandwidth);
  int Next(double t) override { return lds_.Next(); }

 private:
  explicit LdsRateScheduler(policy::LdsScheduler lds) : lds_(std::move(lds)) {}
  policy::LdsScheduler lds_;
};

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_RATE_SCHEDULERS_H_
