#include "shard/lease_request_log.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace shard {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(LeaseRequestLogTest, ReleaseReturnsTheRequestsLeasesOnce) {
  LeaseRequestLog log;
  log.Record(7, 100);
  log.Record(7, 101);
  log.Record(8, 102);
  EXPECT_FALSE(log.Released(7));
  EXPECT_THAT(log.Release(7), ElementsAre(100, 101));
  EXPECT_TRUE(log.Released(7));
  EXPECT_FALSE(log.Released(8));
  EXPECT_THAT(log.Release(7), IsEmpty());
  EXPECT_THAT(log.Release(8), ElementsAre(102));
}

// A release can come before its request (the request was delayed): the id
// is remembered as released.
TEST(LeaseRequestLogTest, AnUnknownRequestIsMarkedReleased) {
  LeaseRequestLog log;
  EXPECT_THAT(log.Release(9), IsEmpty());
  EXPECT_TRUE(log.Released(9));
}

TEST(LeaseRequestLogTest, ForgetsTheOldestRequestsPastItsBounds) {
  LeaseRequestLog log;
  for (uint64_t r = 1; r <= LeaseRequestLog::kMaxRequests + 10; ++r) {
    log.Record(r, r);
  }
  EXPECT_EQ(log.requests(), LeaseRequestLog::kMaxRequests);
  EXPECT_THAT(log.Release(1), IsEmpty());  // forgotten
  EXPECT_THAT(log.Release(LeaseRequestLog::kMaxRequests + 10),
              ElementsAre(LeaseRequestLog::kMaxRequests + 10));
}

TEST(LeaseRequestLogTest, BoundsTheLeasesItKeeps) {
  LeaseRequestLog log;
  const uint64_t per_request = LeaseRequestLog::kMaxLeases / 4;
  for (uint64_t r = 1; r <= 5; ++r) {
    for (uint64_t k = 0; k < per_request; ++k) log.Record(r, r * 1000000 + k);
  }
  EXPECT_THAT(log.Release(1), IsEmpty());  // forgotten to stay in bounds
  EXPECT_EQ(log.Release(5).size(), per_request);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
