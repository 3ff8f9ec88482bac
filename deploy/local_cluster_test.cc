// LocalCluster against the real servers: tokens made once and reused, the
// processes serve with them, a shard killed with SIGKILL comes back on its
// port with the cluster's time, and Stop ends every process cleanly.
#include "deploy/local_cluster.h"

#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/admin_client.h"
#include "cluster/tokens.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace deploy {
namespace {

using cluster::Role;

LocalClusterOptions TwoShards(const std::string& name) {
  LocalClusterOptions o;
  o.data_dir = absl::StrCat(::testing::TempDir(), "local_cluster_", name);
  std::filesystem::remove_all(o.data_dir);
  o.shard_server = "services/shard_server";
  o.coordinator_server = "services/coordinator_server";
  o.shards = 2;
  o.time_scale = 100.0;
  o.time_origin = 1e6;
  o.shard_flags = {"--drain_seconds=1"};
  o.coordinator_flags = {"--drain_seconds=1"};
  return o;
}

TEST(LoadOrCreateTokensTest, MakesOneTokenPerRoleOnceReadableByOwnerOnly) {
  const std::string dir = ::testing::TempDir() + "tokens_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/tokens";
  absl::StatusOr<cluster::TokenTable> made = LoadOrCreateTokens(path);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->size(), 4u);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  absl::StatusOr<cluster::TokenTable> again = LoadOrCreateTokens(path);
  ASSERT_TRUE(again.ok()) << again.status();
  for (cluster::Role role : {cluster::Role::kFetcher, cluster::Role::kPinger,
                             cluster::Role::kOperator, cluster::Role::kInternal}) {
    EXPECT_EQ(again->TokenOf(role), made->TokenOf(role));
    EXPECT_GE(made->TokenOf(role).size(), 16u);
  }
  EXPECT_NE(made->TokenOf(cluster::Role::kFetcher), made->TokenOf(cluster::Role::kOperator));
}

TEST(LocalClusterTest, ServesWithItsTokensAndRestartsAShardOnItsPort) {
  LocalCluster cluster(TwoShards("restart"));
  ASSERT_TRUE(cluster.Start().ok());
  client::AdminClient admin(cluster.ClientOptionsFor(cluster::Role::kOperator));
  absl::StatusOr<ClusterStats> stats = admin.GetClusterStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->num_shards(), 2u);
  // The coordinator's clock is the cluster's (origin 1e6, 100x).
  EXPECT_NEAR(stats->time(), cluster.Now(), 100.0);
  EXPECT_GE(stats->time(), 1e6);

  // A fetcher token may not read the operator's stats.
  client::ClientOptions fetcher = cluster.ClientOptionsFor(cluster::Role::kFetcher);
  fetcher.max_attempts = 1;
  EXPECT_EQ(client::AdminClient(fetcher).GetClusterStats().status().code(),
            absl::StatusCode::kPermissionDenied);

  const std::string address = cluster.shard_address(1);
  cluster.StopShard(1, SIGKILL);
  ASSERT_TRUE(cluster.RestartShard(1).ok());
  EXPECT_EQ(cluster.shard_address(1), address);
  EXPECT_TRUE(cluster.Stop().ok());
}

}  // namespace
}  // namespace deploy
}  // namespace recrawl
