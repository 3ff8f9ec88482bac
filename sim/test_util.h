// Pieces the simulator's tests share.
#ifndef RECRAWL_SIM_TEST_UTIL_H_
#define RECRAWL_SIM_TEST_UTIL_H_

#include <vector>

#include "sim/scheduler.h"
#include "sim/world.h"

namespace recrawl {
namespace sim {
namespace test_util {

// Records every pick of a scheduler it wraps.
class Recorder : public Scheduler {
 public:
  explicit Recorder(Scheduler& inner) : inner_(inner) {}
  void OnSignal(int page, double t) override { inner_.OnSignal(page, t); }
  int Next(double t) override {
    picks.push_back(inner_.Next(t));
    return picks.back();
  }
  void OnCrawl(int page, double t, bool changed) override { inner_.OnCrawl(page, t, changed); }
  std::vector<int> picks;

 private:
  Scheduler& inner_;
};

// Fig. 6's world: noisy signals, λ ~ Beta(¼, ¼), ν ~ U(0.1, 0.6).
inline WorldConfig NoisyWorld(int m, double horizon) {
  WorldConfig c;
  c.num_pages = m;
  c.horizon = horizon;
  c.recall = Distribution::Beta(0.25, 0.25);
  c.false_rate = Distribution::Uniform(0.1, 0.6);
  return c;
}

}  // namespace test_util
}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_TEST_UTIL_H_
