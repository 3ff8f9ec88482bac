// A long-lived second thread that runs one task at a time beside its
// owner's thread: Start(task), the owner's own work, then Wait().
//
// What a per-call std::thread would cost is its start: on a loaded VM a
// thread took ~0.5 ms to begin running, as long as the store's write of a
// batch of 1000 URLs that it was to overlap.
//
// Thread safety: Start and Wait are called by one owner thread, in turn
// (Start, Wait, Start, Wait, ...). The task runs on the side thread and
// must not touch what the owner touches until Wait returns; Wait's return
// makes everything the task wrote visible to the owner.
#ifndef RECRAWL_SHARD_SIDE_THREAD_H_
#define RECRAWL_SHARD_SIDE_THREAD_H_

#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace recrawl {
namespace shard {

class SideThread {
 public:
  SideThread();
  // Waits for a started task, then ends the thread.
  ~SideThread();
  SideThread(const SideThread&) = delete;
  SideThread& operator=(const SideThread&) = delete;

  // Runs `task` on the side thread; what it refers to must live until
  // Wait returns. A task started before must have been waited for.
  void Start(std::function<void()> task);
  // Returns once the task Start gave has run (at once if none is running).
  void Wait();

 private:
  void Loop();

  absl::Mutex mu_;
  std::function<void()> task_ ABSL_GUARDED_BY(mu_);
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_SIDE_THREAD_H_
