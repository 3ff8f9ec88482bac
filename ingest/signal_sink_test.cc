#include "ingest/signal_sink.h"

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/fake_services.h"
#include "cluster/routing.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace ingest {
namespace {

class PingClientSinkTest : public ::testing::Test {
 protected:
  PingClientSinkTest() : server_(&fake_) { server_.Start(); }

  std::unique_ptr<PingClientSink> Sink(int lanes = 2) {
    client::ClientOptions options;
    options.target = server_.target();
    // Connecting several channels at once on a loaded machine may take a
    // few tries.
    options.max_attempts = 20;
    std::vector<std::unique_ptr<client::PingClient>> clients;
    for (int i = 0; i < lanes; ++i) {
      absl::StatusOr<std::unique_ptr<client::PingClient>> ping =
          client::PingClient::Create(options, {});
      EXPECT_TRUE(ping.ok()) << ping.status();
      clients.push_back(*std::move(ping));
    }
    return std::make_unique<PingClientSink>(std::move(clients));
  }
  static std::vector<Signal> Signals(const std::vector<std::string>& urls) {
    std::vector<Signal> out;
    for (const std::string& url : urls) {
      Signal& s = out.emplace_back();
      s.set_url(url);
      s.set_source(SIGNAL_SOURCE_INDEXNOW);
    }
    return out;
  }

  client::FakeCoordinator fake_;
  client::FakeServer server_;
};

TEST_F(PingClientSinkTest, EachRequestGetsItsOwnReport) {
  std::unique_ptr<PingClientSink> sink = Sink(/*lanes=*/3);
  constexpr int kRequests = 8;
  std::vector<absl::StatusOr<DeliveryReport>> reports(kRequests);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRequests; ++r) {
    threads.emplace_back([&, r] {
      // Request r sends r + 1 good URLs and r % 3 bad ones (the fake
      // rejects URLs with "bad").
      std::vector<std::string> urls;
      for (int i = 0; i <= r; ++i) urls.push_back(absl::StrCat("https://r", r, ".example/", i));
      for (int i = 0; i < r % 3; ++i) urls.push_back(absl::StrCat("https://bad.example/", r, i));
      reports[r] = sink->Deliver(Signals(urls));
    });
  }
  for (std::thread& t : threads) t.join();
  int counted = 0;
  for (int r = 0; r < kRequests; ++r) {
    ASSERT_TRUE(reports[r].ok()) << reports[r].status();
    EXPECT_EQ(reports[r]->accepted, static_cast<size_t>(r + 1)) << r;
    EXPECT_EQ(reports[r]->rejected, static_cast<size_t>(r % 3)) << r;
    EXPECT_EQ(reports[r]->error.ok(), r % 3 == 0) << r;
    counted += r + 1;
  }
  // Every good signal reached the server once, before its Deliver returned.
  EXPECT_EQ(fake_.signals().counted(), counted);
}

TEST_F(PingClientSinkTest, RefusedStreamFailsTheRequest) {
  std::unique_ptr<PingClientSink> sink = Sink(/*lanes=*/1);
  fake_.signals().RefuseStreams(grpc::StatusCode::PERMISSION_DENIED);
  absl::StatusOr<DeliveryReport> report = sink->Deliver(Signals({"https://a.example/"}));
  // The stream's error ends the request, or the signal comes back rejected
  // with it.
  if (report.ok()) {
    EXPECT_EQ(report->rejected, 1u);
    EXPECT_EQ(report->error.code(), absl::StatusCode::kPermissionDenied) << report->error;
  } else {
    EXPECT_EQ(report.status().code(), absl::StatusCode::kPermissionDenied) << report.status();
  }
  EXPECT_EQ(fake_.signals().counted(), 0);
}

// A lane that sends straight to the shards reads the shard map again after
// a delivery that failed, and after its period: a shard that moved to
// another address is found there.
TEST_F(PingClientSinkTest, LanesReadTheShardMapAgain) {
  client::FakeShard first, second;
  client::FakeServer first_server(&first), second_server(&second);
  first_server.Start();
  second_server.Start();
  ShardMap map;
  map.set_num_shards(1);
  map.add_addresses(first_server.target());
  map.add_live(true);
  map.set_hash(std::string(cluster::RoutingHashName(cluster::Routing::kSite)));
  fake_.SetShardMap(map);

  client::ClientOptions options;
  options.target = server_.target();
  options.max_attempts = 3;
  options.backoff.initial = absl::Milliseconds(5);
  options.backoff.max = absl::Milliseconds(20);
  client::PingOptions ping;
  ping.route_to_shards = true;
  auto create = [options, ping] { return client::PingClient::Create(options, ping); };
  auto sink_with = [&](absl::Duration period) {
    std::vector<std::unique_ptr<client::PingClient>> clients;
    clients.push_back(*create());
    return std::make_unique<PingClientSink>(std::move(clients), ClientRenewal{create, period});
  };
  std::unique_ptr<PingClientSink> sink = sink_with(absl::InfiniteDuration());
  absl::StatusOr<DeliveryReport> report = sink->Deliver(Signals({"https://a.example/1"}));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->accepted, 1u);
  EXPECT_EQ(first.signals().counted(), 1);

  // The shard moves: its old address stops answering, the map names the
  // new one. The group sent to the old address is not delivered; the next
  // goes to the new.
  first_server.Stop();
  map.set_addresses(0, second_server.target());
  fake_.SetShardMap(map);
  report = sink->Deliver(Signals({"https://a.example/2"}));
  EXPECT_TRUE(!report.ok() || report->accepted == 0);
  report = sink->Deliver(Signals({"https://a.example/3"}));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->accepted, 1u);
  EXPECT_EQ(second.signals().counted_urls(), std::set<std::string>{"https://a.example/3"});

  // With a period of 0 every group renews: a move is followed at once,
  // without a failed delivery.
  sink = sink_with(absl::ZeroDuration());
  ASSERT_TRUE(sink->Deliver(Signals({"https://a.example/4"})).ok());
  first_server.Start();
  map.set_addresses(0, first_server.target());
  fake_.SetShardMap(map);
  report = sink->Deliver(Signals({"https://a.example/5"}));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->accepted, 1u);
  EXPECT_EQ(first.signals().counted_urls(),
            (std::set<std::string>{"https://a.example/1", "https://a.example/5"}));
  EXPECT_EQ(second.signals().counted(), 2);  // /3 and /4
  EXPECT_EQ(fake_.signals().counted(), 0);   // nothing through the coordinator
}

TEST_F(PingClientSinkTest, NothingToSendReturnsAtOnce) {
  std::unique_ptr<PingClientSink> sink = Sink();
  absl::StatusOr<DeliveryReport> report = sink->Deliver({});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->accepted, 0u);
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl
