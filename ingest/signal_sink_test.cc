#include "ingest/signal_sink.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/fake_services.h"
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

TEST_F(PingClientSinkTest, NothingToSendReturnsAtOnce) {
  std::unique_ptr<PingClientSink> sink = Sink();
  absl::StatusOr<DeliveryReport> report = sink->Deliver({});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->accepted, 0u);
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl
