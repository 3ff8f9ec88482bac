#include "coordinator/lease_releases.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace coordinator {
namespace {

using ::testing::ElementsAre;

TEST(LeaseReleasesTest, TakesWhatIsPendingPerShardInOrder) {
  LeaseReleases r(2);
  r.Abandon(0, 11);
  r.Undelivered(0, {5, 6});
  r.Abandon(1, 12);
  r.Abandon(0, 13);
  EXPECT_TRUE(r.Pending(0));
  EXPECT_EQ(r.stats().pending, 5u);
  LeaseReleases::Batch b = r.Take(0, 3);
  EXPECT_THAT(b.request_ids, ElementsAre(11, 13));
  EXPECT_THAT(b.lease_ids, ElementsAre(5));
  b = r.Take(0, 3);
  EXPECT_THAT(b.lease_ids, ElementsAre(6));
  EXPECT_FALSE(r.Pending(0));
  EXPECT_TRUE(r.Pending(1));
  EXPECT_EQ(r.stats().pending, 1u);
  EXPECT_EQ(r.stats().abandoned_requests, 3u);
  EXPECT_EQ(r.stats().undelivered_leases, 2u);
}

// A failed release call puts its ids back in front of what came since.
TEST(LeaseReleasesTest, AFailedCallIsPendingAgainFirst) {
  LeaseReleases r(1);
  r.Abandon(0, 1);
  LeaseReleases::Batch b = r.Take(0, 10);
  r.Abandon(0, 2);
  r.Return(0, std::move(b));
  EXPECT_EQ(r.stats().pending, 2u);
  EXPECT_THAT(r.Take(0, 10).request_ids, ElementsAre(1, 2));
  r.Released(7);
  EXPECT_EQ(r.stats().released, 7u);
  EXPECT_EQ(r.stats().pending, 0u);
}

}  // namespace
}  // namespace coordinator
}  // namespace recrawl
