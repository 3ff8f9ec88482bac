#include "shard/side_thread.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace recrawl {
namespace shard {
namespace {

TEST(SideThreadTest, RunsEachTaskOnItsThreadBeforeWaitReturns) {
  SideThread side;
  const std::thread::id owner = std::this_thread::get_id();
  std::vector<int> done;  // written by the tasks, read after each Wait
  for (int i = 0; i < 1000; ++i) {
    std::thread::id ran_on;
    side.Start([&done, &ran_on, i] {
      ran_on = std::this_thread::get_id();
      done.push_back(i);
    });
    side.Wait();
    ASSERT_EQ(done.size(), static_cast<size_t>(i + 1));
    EXPECT_EQ(done.back(), i);
    EXPECT_NE(ran_on, owner);
  }
}

TEST(SideThreadTest, TaskRunsWhileTheOwnerWorks) {
  SideThread side;
  std::atomic<bool> owner_started{false};
  std::atomic<bool> task_saw_owner{false};
  side.Start([&] {
    // Only returns once the owner is past Start: the two run side by side.
    while (!owner_started.load()) std::this_thread::yield();
    task_saw_owner = true;
  });
  owner_started = true;
  side.Wait();
  EXPECT_TRUE(task_saw_owner.load());
}

TEST(SideThreadTest, WaitWithoutATaskReturnsAndDestructionWaits) {
  int runs = 0;
  {
    SideThread side;
    side.Wait();
    side.Start([&runs] { ++runs; });
  }  // the destructor waits for the task
  EXPECT_EQ(runs, 1);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
