#include "shard/side_thread.h"

#include <cassert>
#include <utility>

namespace recrawl {
namespace shard {

SideThread::SideThread() : thread_([this] { Loop(); }) {}

SideThread::~SideThread() {
  Wait();
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void SideThread::Start(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  assert(!running_);
  task_ = std::move(task);
  running_ = true;
}

void SideThread::Wait() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](bool* running) { return !*running; }, &running_));
}

void SideThread::Loop() {
  while (true) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](SideThread* t)
               ABSL_EXCLUSIVE_LOCKS_REQUIRED(t->mu_) { return t->task_ != nullptr || t->stop_; },
          this));
      if (task_ == nullptr) return;  // stopped
      task = std::move(task_);
      task_ = nullptr;
    }
    task();
    absl::MutexLock lock(&mu_);
    running_ = false;
  }
}

}  // namespace shard
}  // namespace recrawl
