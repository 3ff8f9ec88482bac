// Options for the client tests: a fixed coordinator clock, short backoff,
// and waits that are recorded (and taken for real only when they are short,
// so that a reconnecting channel gets its moment).
#ifndef RECRAWL_CLIENT_TEST_UTIL_H_
#define RECRAWL_CLIENT_TEST_UTIL_H_

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/client_options.h"

namespace recrawl {
namespace client {

class RecordedWaits {
 public:
  // Runs `hook` (if set) before the first wait, e.g. to restart a server.
  void OnFirstWait(std::function<void()> hook) { hook_ = std::move(hook); }
  void Wait(absl::Duration d) {
    std::function<void()> hook;
    {
      absl::MutexLock lock(&mu_);
      waits_.push_back(d);
      hook.swap(hook_);
    }
    if (hook) hook();
    absl::SleepFor(std::min(d, absl::Milliseconds(20)));
  }
  std::vector<absl::Duration> waits() const {
    absl::MutexLock lock(&mu_);
    return waits_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<absl::Duration> waits_;
  std::function<void()> hook_;
};

inline ClientOptions TestOptions(const std::string& target, RecordedWaits* waits,
                                 double now = 1000.0) {
  ClientOptions o;
  o.target = target;
  o.token = "test-token-0123456789";
  o.deadline = absl::Seconds(5);
  o.backoff.initial = absl::Milliseconds(10);
  o.backoff.max = absl::Milliseconds(80);
  o.backoff.jitter = 0.0;
  o.max_attempts = 20;
  o.clock = [now] { return now; };
  o.sleep = [waits](absl::Duration d) { waits->Wait(d); };
  return o;
}

}  // namespace client
}  // namespace recrawl

#endif  // RECRAWL_CLIENT_TEST_UTIL_H_
