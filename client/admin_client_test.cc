// AdminClient against a fake coordinator: the requests it builds, batch
// splitting with per-item errors indexed in the caller's list, errors as
// statuses, and retrying across a server restart.
#include "client/admin_client.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/fake_services.h"
#include "client/test_util.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace client {
namespace {

class AdminClientTest : public ::testing::Test {
 protected:
  AdminClientTest() : server_(&fake_) { server_.Start(); }
  std::unique_ptr<AdminClient> Client() {
    ClientOptions o = TestOptions(server_.target(), &waits_);
    o.max_batch_items = 3;
    return std::make_unique<AdminClient>(o);
  }

  FakeCoordinator fake_;
  FakeServer server_;
  RecordedWaits waits_;
};

TEST_F(AdminClientTest, SetsAndGetsBandwidthAndMode) {
  auto client = Client();
  auto state = client->SetBandwidth(250.0, COORDINATOR_MODE_SPLIT_ADAPTIVE);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->bandwidth(), 250.0);
  state = client->SetBandwidth(std::nullopt, COORDINATOR_MODE_MERGE);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->bandwidth(), 250.0);
  EXPECT_EQ(state->mode(), COORDINATOR_MODE_MERGE);
  const auto requests = fake_.bandwidth_requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_TRUE(requests[0].has_bandwidth());
  EXPECT_FALSE(requests[1].has_bandwidth());
  state = client->GetBandwidth();
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->mode(), COORDINATOR_MODE_MERGE);
}

TEST_F(AdminClientTest, AnInvalidSettingComesBackAsItsStatus) {
  auto state = Client()->SetBandwidth(-1.0, COORDINATOR_MODE_UNSPECIFIED);
  EXPECT_EQ(state.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(state.status().message(), "bandwidth: must be > 0");
  EXPECT_EQ(fake_.calls("SetBandwidth"), 1);  // not retried
}

TEST_F(AdminClientTest, UpsertSplitsIntoBatchesAndIndexesRejectedItems) {
  std::vector<UrlSpec> urls(8);
  for (int i = 0; i < 8; ++i) {
    urls[i].set_url(i == 4 ? "https://bad.com/" : absl::StrCat("https://a.com/", i));
    urls[i].set_importance(i);
  }
  auto response = Client()->UpsertUrls(urls);
  ASSERT_TRUE(response.ok()) << response.status();
  const auto requests = fake_.upsert_requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].urls_size(), 3);
  EXPECT_EQ(requests[2].urls_size(), 2);
  EXPECT_EQ(requests[1].urls(0).importance(), 3.0);
  EXPECT_EQ(response->created(), 7u);
  EXPECT_EQ(response->result().applied(), 7u);
  ASSERT_EQ(response->result().rejected_size(), 1);
  EXPECT_EQ(response->result().rejected(0).index(), 4u);
}

TEST_F(AdminClientTest, DeleteAndGetReportUnknownUrls) {
  auto client = Client();
  UrlSpec spec;
  spec.set_url("https://a.com/1");
  ASSERT_TRUE(client->UpsertUrls({spec}).ok());
  auto state = client->GetUrlState("https://a.com/1");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->importance(), 2.5);
  auto deleted = client->DeleteUrls({"https://a.com/2", "https://a.com/1"});
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->result().applied(), 1u);
  ASSERT_EQ(deleted->result().rejected_size(), 1);
  EXPECT_EQ(deleted->result().rejected(0).index(), 0u);
  EXPECT_EQ(client->GetUrlState("https://a.com/1").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(AdminClientTest, SetsHostPoliteness) {
  HostPoliteness host;
  host.set_host("example.com");
  host.set_min_delay(2.5);
  auto response = Client()->SetHostPoliteness({host});
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->result().applied(), 1u);
  ASSERT_EQ(fake_.politeness_requests().size(), 1u);
  EXPECT_EQ(fake_.politeness_requests()[0].hosts(0).min_delay(), 2.5);
}

TEST_F(AdminClientTest, RetriesAcrossAServerRestart) {
  auto client = Client();
  ASSERT_TRUE(client->GetClusterStats().ok());
  server_.Stop();
  waits_.OnFirstWait([&] { server_.Start(); });
  auto stats = client->GetClusterStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->shards_size(), 2);
  EXPECT_FALSE(waits_.waits().empty());
}

TEST_F(AdminClientTest, GivesUpAfterMaxAttempts) {
  fake_.FailNext(100, grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Client()->GetBandwidth().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(fake_.calls("GetBandwidth"), 20);
}

}  // namespace
}  // namespace client
}  // namespace recrawl
