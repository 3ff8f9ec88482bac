// The pieces every client shares: backoff delays, batch splitting and the
// joining of per-item results.
#include "client/rpc.h"

#include "client/batches.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace client {
namespace {

TEST(BackoffDelaysTest, GrowsByTheMultiplierUpToTheCap) {
  Backoff b;
  b.initial = absl::Milliseconds(10);
  b.max = absl::Milliseconds(50);
  b.multiplier = 2.0;
  b.jitter = 0.0;
  BackoffDelays delays(b);
  EXPECT_EQ(delays.Next(0.5), absl::Milliseconds(10));
  EXPECT_EQ(delays.Next(0.5), absl::Milliseconds(20));
  EXPECT_EQ(delays.Next(0.5), absl::Milliseconds(40));
  EXPECT_EQ(delays.Next(0.5), absl::Milliseconds(50));
  EXPECT_EQ(delays.Next(0.5), absl::Milliseconds(50));
  delays.Reset();
  EXPECT_EQ(delays.Next(0.5), absl::Milliseconds(10));
}

TEST(BackoffDelaysTest, JitterScalesWithinItsBand) {
  Backoff b;
  b.initial = absl::Milliseconds(100);
  b.jitter = 0.2;
  auto ms = [&](double uniform) {
    return absl::ToDoubleMilliseconds(BackoffDelays(b).Next(uniform));
  };
  EXPECT_NEAR(ms(0.0), 80.0, 1e-6);
  EXPECT_NEAR(ms(0.5), 100.0, 1e-6);
  EXPECT_NEAR(ms(1.0), 120.0, 1e-6);
}

TEST(ChunkRangesTest, CoversEveryItemOnceInOrder) {
  using Ranges = std::vector<std::pair<int, int>>;
  EXPECT_EQ(ChunkRanges(0, 3), Ranges{});
  EXPECT_EQ(ChunkRanges(3, 3), (Ranges{{0, 3}}));
  EXPECT_EQ(ChunkRanges(7, 3), (Ranges{{0, 3}, {3, 6}, {6, 7}}));
}

TEST(AppendBatchResultTest, ShiftsRejectedIndicesAndAddsApplied) {
  BatchResult total;
  BatchResult part;
  part.set_applied(2);
  ItemStatus* item = part.add_rejected();
  item->set_index(1);
  item->set_code(5);
  item->set_message("url: not found");
  AppendBatchResult(part, 0, &total);
  AppendBatchResult(part, 3, &total);
  EXPECT_EQ(total.applied(), 4u);
  ASSERT_EQ(total.rejected_size(), 2);
  EXPECT_EQ(total.rejected(0).index(), 1u);
  EXPECT_EQ(total.rejected(1).index(), 4u);
  EXPECT_EQ(total.rejected(1).message(), "url: not found");
}

TEST(FromGrpcStatusTest, KeepsCodeAndMessage) {
  const absl::Status s =
      FromGrpcStatus(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "role fetcher"));
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), "role fetcher");
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
}

}  // namespace
}  // namespace client
}  // namespace recrawl
