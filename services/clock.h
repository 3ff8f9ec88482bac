// The clock a server gives its core: real time, or scaled time so that
// demos and tests run a simulated week in seconds (docs/design.md, "Time").
#ifndef RECRAWL_SERVICES_CLOCK_H_
#define RECRAWL_SERVICES_CLOCK_H_

#include <chrono>

namespace recrawl {
namespace services {

class Clock {
 public:
  // Seconds: `origin` at construction, then advancing `scale` times as fast
  // as real time. Clock(1, UnixNow()) is real time.
  Clock(double scale, double origin) : scale_(scale), origin_(origin), start_(Steady::now()) {}

  // As above, but the clock showed `origin` at Unix time `epoch` rather than
  // now: processes given the same origin and epoch share one scaled time,
  // and a process restarted with them resumes it instead of starting over
  // (the local cluster restarts shards this way).
  Clock(double scale, double origin, double epoch)
      : scale_(scale),
        origin_(origin),
        start_(Steady::now() - std::chrono::duration_cast<Steady::duration>(
                                   std::chrono::duration<double>(UnixNow() - epoch))) {}

  double Now() const {
    const std::chrono::duration<double> elapsed = Steady::now() - start_;
    return origin_ + scale_ * elapsed.count();
  }

  // Clock seconds per real second.
  double scale() const { return scale_; }

  static double UnixNow() {
    const std::chrono::duration<double> since_epoch =
        std::chrono::system_clock::now().time_since_epoch();
    return since_epoch.count();
  }

 private:
  using Steady = std::chrono::steady_clock;
  const double scale_;
  const double origin_;
  const Steady::time_point start_;
};

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_CLOCK_H_
