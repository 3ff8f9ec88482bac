// What recrawlctl prints: mode names both ways, the stats table, progress.
#include "client/cli_output.h"

#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace client {
namespace {

using ::testing::HasSubstr;

TEST(ModeNameTest, RoundTrips) {
  for (CoordinatorMode mode :
       {COORDINATOR_MODE_MERGE, COORDINATOR_MODE_SPLIT_EQUAL, COORDINATOR_MODE_SPLIT_ADAPTIVE}) {
    EXPECT_EQ(ParseModeName(ModeName(mode)), mode);
  }
  EXPECT_EQ(ParseModeName("split"), std::nullopt);
}

TEST(FormatClusterStatsTest, OneRowPerShardAndTotals) {
  ClusterStats stats;
  stats.set_bandwidth(100);
  stats.set_mode(COORDINATOR_MODE_SPLIT_EQUAL);
  stats.set_num_shards(2);
  stats.set_live_shards(1);
  for (int s = 0; s < 2; ++s) {
    ShardStats* shard = stats.add_shards();
    shard->set_urls(1000 * (s + 1));
    shard->set_picks_per_second(10);
    stats.add_live(s == 0);
  }
  const std::string table = FormatClusterStats(stats);
  EXPECT_THAT(table, HasSubstr("mode equal"));
  EXPECT_THAT(table, HasSubstr("shards 1 live of 2"));
  EXPECT_THAT(table, HasSubstr("NO"));
  EXPECT_THAT(table, HasSubstr("3000"));  // total URLs
  EXPECT_THAT(table, HasSubstr("20.0"));  // total picks/s
}

TEST(ToJsonTest, UsesProtoFieldNames) {
  BandwidthState state;
  state.set_bandwidth(5);
  EXPECT_THAT(ToJson(state), HasSubstr("\"bandwidth\": 5"));
  EXPECT_THAT(ToJson(state), HasSubstr("\"mode\""));  // defaults printed
}

TEST(ProgressLineTest, FillsInProportion) {
  EXPECT_EQ(ProgressLine(5, 10, 10), "[#####.....]  50%  5/10");
  EXPECT_EQ(ProgressLine(10, 10, 4), "[####] 100%  10/10");
  EXPECT_EQ(ProgressLine(0, 0, 2), "[##] 100%  0/0");
}

TEST(ProgressBarTest, SilentWhenNotATerminal) {
  std::ostringstream out;
  ProgressBar off(&out, 10, false);
  off.Update(5);
  off.Finish();
  EXPECT_EQ(out.str(), "");
  ProgressBar on(&out, 10, true);
  on.Update(5);
  on.Finish();
  EXPECT_THAT(out.str(), HasSubstr("\r["));
}

}  // namespace
}  // namespace client
}  // namespace recrawl
