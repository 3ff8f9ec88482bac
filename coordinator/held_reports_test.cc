#include "coordinator/held_reports.h"

#include "gtest/gtest.h"

namespace recrawl {
namespace coordinator {
namespace {

CrawlReport Report(uint64_t lease_id) {
  CrawlReport r;
  r.set_lease_id(lease_id);
  return r;
}

TEST(HeldReportsTest, DeliversInArrivalOrderPerShard) {
  HeldReports held(2, 100);
  for (uint64_t id = 1; id <= 5; ++id) ASSERT_TRUE(held.Hold(id % 2, Report(id)));
  EXPECT_TRUE(held.Holds(0));
  EXPECT_TRUE(held.Holds(1));
  ReportCrawlsRequest batch;
  held.Take(1, 10, &batch);
  ASSERT_EQ(batch.reports_size(), 3);
  EXPECT_EQ(batch.reports(0).lease_id(), 1u);
  EXPECT_EQ(batch.reports(1).lease_id(), 3u);
  EXPECT_EQ(batch.reports(2).lease_id(), 5u);
  EXPECT_FALSE(held.Holds(1));
  // On its way, not applied yet.
  EXPECT_EQ(held.pending(), 5u);
  held.Delivered(3);
  EXPECT_EQ(held.pending(), 2u);
}

TEST(HeldReportsTest, AFailedBatchReturnsInFrontInOrder) {
  HeldReports held(1, 100);
  for (uint64_t id = 1; id <= 5; ++id) ASSERT_TRUE(held.Hold(0, Report(id)));
  ReportCrawlsRequest batch;
  held.Take(0, 2, &batch);
  ASSERT_EQ(batch.reports_size(), 2);
  ASSERT_TRUE(held.Hold(0, Report(6)));
  held.Return(0, &batch);
  EXPECT_EQ(batch.reports_size(), 0);
  EXPECT_EQ(held.pending(), 6u);
  held.Take(0, 100, &batch);
  ASSERT_EQ(batch.reports_size(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(batch.reports(i).lease_id(), static_cast<uint64_t>(i + 1));
}

TEST(HeldReportsTest, CapacityCountsReportsOnTheirWay) {
  HeldReports held(2, 3);
  ASSERT_TRUE(held.Hold(0, Report(1)));
  ASSERT_TRUE(held.Hold(1, Report(2)));
  ReportCrawlsRequest batch;
  held.Take(0, 10, &batch);
  ASSERT_TRUE(held.Hold(1, Report(3)));
  // One held at shard 0's delivery, two at shard 1: full.
  EXPECT_FALSE(held.Hold(0, Report(4)));
  EXPECT_EQ(held.pending(), 3u);
  held.Delivered(1);
  EXPECT_TRUE(held.Hold(0, Report(4)));
}

}  // namespace
}  // namespace coordinator
}  // namespace recrawl
