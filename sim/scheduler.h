// What the simulator asks of a crawl policy: which page to crawl at each slot
// time, given the signals and crawl outcomes it has been told about.
#ifndef RECRAWL_SIM_SCHEDULER_H_
#define RECRAWL_SIM_SCHEDULER_H_

namespace recrawl {
namespace sim {

class Scheduler {
 public:
  // Returned by Next() to leave a slot unused.
  static constexpr int kIdle = -1;

  virtual ~Scheduler() = default;
  // A change-indicating signal for `page` arrived at time t (<= the next
  // slot time). Calls come in slot order, not necessarily in time order
  // within one slot.
  virtual void OnSignal(int page, double t) {}
  // The page to crawl at slot time t (non-decreasing), or kIdle.
  virtual int Next(double t) = 0;
  // `page` was crawled at t; `changed` says whether its content differed from
  // the previous crawl (what a fetcher's digest comparison reports).
  virtual void OnCrawl(int page, double t, bool changed) {}
};

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_SCHEDULER_H_
