// PingClient against fake servers: batch sizes, client-side times, resending
// after a broken stream without double counting, per-item errors, errors
// that end the stream, reconnecting, and routing straight to the shards.
#include "client/ping_client.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/fake_services.h"
#include "client/test_util.h"
#include "cluster/routing.h"
#include "cluster/url_id.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace client {
namespace {

Signal SignalFor(const std::string& url, double time = 0.0) {
  Signal s;
  s.set_url(url);
  s.set_time(time);
  s.set_source(SIGNAL_SOURCE_INDEXNOW);
  return s;
}

std::string Url(int i) { return absl::StrCat("https://site", i, ".com/p"); }

class PingClientTest : public ::testing::Test {
 protected:
  PingClientTest() : server_(&fake_) { server_.Start(); }

  std::unique_ptr<PingClient> Client(PingOptions ping) {
    auto client = PingClient::Create(TestOptions(server_.target(), &waits_), ping);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }
  PingOptions Batches(int size, int in_flight = 4) {
    PingOptions p;
    p.batch_size = size;
    p.max_in_flight = in_flight;
    return p;
  }
  // Adds signals 0..n-1 (with distinct times) and flushes.
  void AddAndFlush(PingClient* client, int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(client->Add(SignalFor(Url(i), 500.0 + i)).ok());
    }
    absl::Status s = client->Flush();
    ASSERT_TRUE(s.ok()) << s;
  }

  FakeCoordinator fake_;
  FakeServer server_;
  RecordedWaits waits_;
};

TEST_F(PingClientTest, SendsFullBatchesThenTheRestOnFlush) {
  auto client = Client(Batches(3));
  AddAndFlush(client.get(), 10);
  EXPECT_EQ(fake_.signals().batch_sizes(), (std::vector<int>{3, 3, 3, 1}));
  EXPECT_EQ(fake_.signals().sequences(), (std::vector<uint64_t>{1, 2, 3, 4}));
  const PingStats stats = client->stats();
  EXPECT_EQ(stats.acknowledged, 4u);
  EXPECT_EQ(stats.counted, 10u);
  EXPECT_EQ(stats.duplicate, 0u);
  EXPECT_EQ(fake_.calls("StreamSignals"), 1);
}

TEST_F(PingClientTest, GivesSignalsWithoutATimeTheClientsTime) {
  auto client = Client(Batches(10));
  ASSERT_TRUE(client->Add(SignalFor(Url(1))).ok());
  ASSERT_TRUE(client->Add(SignalFor(Url(2), 7.0)).ok());
  ASSERT_TRUE(client->Flush().ok());
  EXPECT_EQ(fake_.signals().times(), (std::vector<double>{1000.0, 7.0}));
}

TEST_F(PingClientTest, ResendsUnacknowledgedBatchesAfterABrokenStream) {
  // The server applies the second batch, then the stream breaks before its
  // acknowledgement: the client sends it again on a new stream, the server
  // sees its signals as duplicates, and nothing is counted twice or lost.
  fake_.signals().BreakNextStreamAfter(2);
  auto client = Client(Batches(3, /*in_flight=*/1));
  AddAndFlush(client.get(), 10);
  EXPECT_EQ(fake_.signals().counted(), 10);
  EXPECT_EQ(fake_.signals().duplicates(), 3);
  EXPECT_EQ(fake_.signals().sequences(), (std::vector<uint64_t>{1, 2, 2, 3, 4}));
  // The client cannot know that the lost acknowledgement counted three: its
  // totals show them as the duplicates of the second delivery.
  const PingStats stats = client->stats();
  EXPECT_EQ(stats.counted, 7u);
  EXPECT_EQ(stats.duplicate, 3u);
  EXPECT_EQ(stats.acknowledged, 4u);
  EXPECT_EQ(stats.resent_batches, 1u);
  EXPECT_EQ(stats.reconnects, 1u);
  EXPECT_EQ(fake_.calls("StreamSignals"), 2);
}

TEST_F(PingClientTest, ReportsRejectedSignalsWithTheirReason) {
  auto client = Client(Batches(2));
  ASSERT_TRUE(client->Add(SignalFor(Url(1), 1.0)).ok());
  ASSERT_TRUE(client->Add(SignalFor("https://bad.com/x", 2.0)).ok());
  ASSERT_TRUE(client->Add(SignalFor(Url(3), 3.0)).ok());
  ASSERT_TRUE(client->Flush().ok());
  const std::vector<RejectedSignal> rejected = client->TakeRejected();
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].signal.url(), "https://bad.com/x");
  EXPECT_EQ(rejected[0].status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rejected[0].status.message(), "url: bad by the fake's rule");
  EXPECT_EQ(client->stats().counted, 2u);
  EXPECT_TRUE(client->TakeRejected().empty());
}

TEST_F(PingClientTest, SignalsAnsweredUnavailableAreSentAgain) {
  fake_.signals().FailFlakyUrlsOnce();
  auto client = Client(Batches(3));
  for (int i = 0; i < 5; ++i) {
    const std::string url = i % 2 ? "https://flaky.com/" + std::to_string(i) : Url(i);
    ASSERT_TRUE(client->Add(SignalFor(url, 10.0 + i)).ok());
  }
  ASSERT_TRUE(client->Flush().ok());
  EXPECT_EQ(fake_.signals().counted(), 5);
  EXPECT_TRUE(client->TakeRejected().empty());
  EXPECT_EQ(client->stats().retried, 2u);
  EXPECT_EQ(client->stats().counted, 5u);
  EXPECT_EQ(waits_.waits().size(), 1u);  // one backoff before the resend
}

TEST_F(PingClientTest, APermanentStreamErrorIsReturnedAndItsSignalsRejected) {
  fake_.FailNext(1, grpc::StatusCode::PERMISSION_DENIED);
  auto client = Client(Batches(10));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client->Add(SignalFor(Url(i))).ok());
  EXPECT_EQ(client->Flush().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(client->TakeRejected().size(), 3u);
  // The next stream works again.
  AddAndFlush(client.get(), 2);
  EXPECT_EQ(fake_.signals().counted(), 2);
}

TEST_F(PingClientTest, ReconnectsAfterTheServerRestartsOnTheSamePort) {
  auto client = Client(Batches(2));
  AddAndFlush(client.get(), 2);
  server_.Stop();
  waits_.OnFirstWait([&] { server_.Start(); });
  for (int i = 2; i < 6; ++i) {
    ASSERT_TRUE(client->Add(SignalFor(Url(i), 500.0 + i)).ok());
  }
  absl::Status s = client->Flush();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(fake_.signals().counted(), 6);
  EXPECT_EQ(client->stats().counted, 6u);
}

TEST_F(PingClientTest, RoutesStraightToTheOwningShards) {
  FakeShard shard0, shard1;
  FakeServer server0(&shard0), server1(&shard1);
  server0.Start();
  server1.Start();
  ShardMap map;
  map.set_num_shards(3);
  map.add_addresses(server0.target());
  map.add_addresses(server1.target());
  map.add_addresses("127.0.0.1:1");  // out: its signals go through us
  map.add_live(true);
  map.add_live(true);
  map.add_live(false);
  map.set_hash(std::string(cluster::RoutingHashName(cluster::Routing::kSite)));
  fake_.SetShardMap(map);

  PingOptions p = Batches(4);
  p.route_to_shards = true;
  auto client = Client(p);
  ASSERT_EQ(client->routed_shards(), 2);
  std::set<std::string> want[3];
  for (int i = 0; i < 30; ++i) {
    const std::string url = Url(i);
    want[cluster::ShardOfHost(absl::StrCat("site", i, ".com"), 3)].insert(url);
    ASSERT_TRUE(client->Add(SignalFor(url, 1.0)).ok());
  }
  ASSERT_TRUE(client->Add(SignalFor("ftp://x/", 1.0)).ok());
  ASSERT_TRUE(client->Flush().ok());
  EXPECT_EQ(shard0.signals().counted_urls(), want[0]);
  EXPECT_EQ(shard1.signals().counted_urls(), want[1]);
  EXPECT_EQ(fake_.signals().counted_urls(), want[2]);
  EXPECT_FALSE(want[0].empty() || want[1].empty() || want[2].empty());
  // A map with a rule this client does not know: all through the
  // coordinator.
  map.set_hash("some-other-hash");
  fake_.SetShardMap(map);
  EXPECT_EQ(Client(p)->routed_shards(), 0);
  EXPECT_EQ(client->stats().counted, 30u);
  const auto rejected = client->TakeRejected();
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].status.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace client
}  // namespace recrawl
