#include "coordinator/shard_directory.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ShardDirectory::Probe Answer(const std::string& address, int index, int count = 2,
                             const std::string& routing = "site") {
  return {address, true, index, count, routing};
}

TEST(ShardDirectoryTest, ShardsArePlacedByTheIndexTheyReport) {
  ShardDirectory dir(2, {});
  EXPECT_THAT(dir.Live(0.0), ElementsAre(false, false));
  ASSERT_TRUE(dir.Record(Answer("10.0.0.9:7000", 1), 0.0).ok());
  ASSERT_TRUE(dir.Record(Answer("10.0.0.3:7000", 0), 0.0).ok());
  EXPECT_EQ(dir.shard(1).address, "10.0.0.9:7000");
  EXPECT_THAT(dir.Live(0.1), ElementsAre(true, true));
}

TEST(ShardDirectoryTest, ASilentShardIsOutWithinTheTimeoutAndBackOnAnswer) {
  ShardDirectory::Options options;
  options.failure_timeout = 1.5;
  ShardDirectory dir(2, options);
  ASSERT_TRUE(dir.Record(Answer("a:1", 0), 0.0).ok());
  ASSERT_TRUE(dir.Record(Answer("b:1", 1), 0.0).ok());
  EXPECT_THAT(dir.TakeTransitions(0.0),
              ElementsAre(testing::Field(&ShardDirectory::Transition::live, true),
                          testing::Field(&ShardDirectory::Transition::live, true)));
  // Shard 1 stops answering after t = 0; shard 0 keeps answering.
  for (double t = 0.4; t < 3.0; t += 0.4) {
    ASSERT_TRUE(dir.Record(Answer("a:1", 0), t).ok());
    ShardDirectory::Probe silent;
    silent.address = "b:1";
    ASSERT_TRUE(dir.Record(silent, t).ok());
  }
  EXPECT_TRUE(dir.IsLive(1, 1.4));
  EXPECT_FALSE(dir.IsLive(1, 1.5));
  EXPECT_TRUE(dir.IsLive(0, 3.0));
  const auto changes = dir.TakeTransitions(3.0);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].shard_index, 1);
  EXPECT_FALSE(changes[0].live);
  // It comes back (maybe at a new address, e.g. a rescheduled pod).
  ASSERT_TRUE(dir.Record(Answer("a:1", 0), 5.0).ok());
  ASSERT_TRUE(dir.Record(Answer("c:1", 1), 5.0).ok());
  EXPECT_TRUE(dir.IsLive(1, 5.0));
  EXPECT_EQ(dir.shard(1).address, "c:1");
  const auto back = dir.TakeTransitions(5.0);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].shard_index, 1);
  EXPECT_TRUE(dir.TakeTransitions(5.1).empty());
}

TEST(ShardDirectoryTest, AFailedCallTakesAShardOutUntilItsNextAnswer) {
  ShardDirectory dir(2, {});
  ASSERT_TRUE(dir.Record(Answer("a:1", 0), 0.0).ok());
  ASSERT_TRUE(dir.Record(Answer("b:1", 1), 0.0).ok());
  dir.TakeTransitions(0.0);
  dir.RecordFailure(1, 0.2);
  EXPECT_THAT(dir.Live(0.2), ElementsAre(true, false));
  const auto changes = dir.TakeTransitions(0.2);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].shard_index, 1);
  EXPECT_FALSE(changes[0].live);
  ASSERT_TRUE(dir.Record(Answer("b:1", 1), 0.3).ok());
  EXPECT_TRUE(dir.IsLive(1, 0.3));
}

TEST(ShardDirectoryTest, AWrongShardCountIsRefusedLoudly) {
  ShardDirectory dir(4, {});
  absl::Status status = dir.Record(Answer("a:1", 0, /*count=*/3), 0.0);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("cluster of 3 shards"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("a:1"));
  EXPECT_FALSE(dir.IsLive(0, 0.0));
  EXPECT_EQ(dir.Record(Answer("a:1", 4, 4), 0.0).code(), absl::StatusCode::kFailedPrecondition);
}

// A shard whose store routes otherwise (made before site routing) would
// own other URLs than the coordinator sends it: refused, naming both.
TEST(ShardDirectoryTest, AShardRoutingOtherwiseIsRefused) {
  ShardDirectory dir(2, {});
  absl::Status status = dir.Record(Answer("a:1", 0, 2, "host"), 0.0);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("routes URLs by host"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("this coordinator by site"));
  EXPECT_FALSE(dir.IsLive(0, 0.0));
  ShardDirectory by_host(2, {1.5, "host"});
  EXPECT_TRUE(by_host.Record(Answer("a:1", 0, 2, "host"), 0.0).ok());
}

TEST(ShardDirectoryTest, TwoAddressesClaimingOneIndexKeepTheLiveOne) {
  ShardDirectory dir(2, {});
  ASSERT_TRUE(dir.Record(Answer("a:1", 0), 0.0).ok());
  absl::Status status = dir.Record(Answer("b:1", 0), 0.5);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("both report index 0"));
  EXPECT_EQ(dir.shard(0).address, "a:1");
  // Once a:1 has been silent past the timeout, b:1 may take the index.
  EXPECT_TRUE(dir.Record(Answer("b:1", 0), 2.0).ok());
  EXPECT_EQ(dir.shard(0).address, "b:1");
}

}  // namespace
}  // namespace coordinator
}  // namespace recrawl
