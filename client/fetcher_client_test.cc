// FetcherClient against a fake coordinator: waiting for next_slot_time,
// backoff, which failures are retried, report batching with per-item errors,
// the lease stream, and reconnecting to a restarted server.
#include "client/fetcher_client.h"

#include <memory>
#include <vector>

#include "client/fake_services.h"
#include "client/test_util.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace client {
namespace {

FetchLeaseResponse Leases(int n, double next_slot_time) {
  FetchLeaseResponse r;
  for (int i = 0; i < n; ++i) {
    CoordinatorLease* lease = r.add_leases();
    lease->set_url("https://example.com/" + std::to_string(i));
    lease->set_lease_id(100 + i);
    lease->set_slot_time(next_slot_time - 1 + 0.1 * i);
  }
  r.set_next_slot_time(next_slot_time);
  return r;
}

class FetcherClientTest : public ::testing::Test {
 protected:
  FetcherClientTest() : server_(&fake_) { server_.Start(); }

  std::unique_ptr<FetcherClient> Client(FetcherOptions f = {}) {
    if (f.holder.empty()) f.holder = "fetcher-1";
    return std::make_unique<FetcherClient>(options(), f);
  }
  ClientOptions options() {
    ClientOptions o = TestOptions(server_.target(), &waits_, kNow);
    o.time_scale = time_scale_;
    o.max_batch_items = 2;
    return o;
  }

  static constexpr double kNow = 1000.0;
  double time_scale_ = 1.0;
  FakeCoordinator fake_;
  FakeServer server_;
  RecordedWaits waits_;
};

TEST(SecondsUntilNextSlotTest, WaitsUntilTheSlotComesWithinTheLookahead) {
  EXPECT_EQ(SecondsUntilNextSlot(10.0, 12.5, 0.0), 2.5);
  EXPECT_EQ(SecondsUntilNextSlot(10.0, 12.5, 1.0), 1.5);
  EXPECT_EQ(SecondsUntilNextSlot(10.0, 12.5, 5.0), 0.0);
  // Due already but nothing leased: no slot to wait for.
  EXPECT_EQ(SecondsUntilNextSlot(10.0, 10.0, 0.0), std::nullopt);
  EXPECT_EQ(SecondsUntilNextSlot(10.0, 0.0, 0.0), std::nullopt);
}

TEST_F(FetcherClientTest, LeaseWaitsUntilNextSlotTime) {
  fake_.ScriptLease(Leases(0, kNow + 0.5));
  fake_.ScriptLease(Leases(3, kNow + 2));
  auto urls = Client()->Lease(5);
  ASSERT_TRUE(urls.ok()) << urls.status();
  EXPECT_EQ(urls->size(), 3u);
  EXPECT_EQ(waits_.waits(), std::vector<absl::Duration>{absl::Seconds(0.5)});
  const auto requests = fake_.lease_requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].max_urls(), 5u);
  EXPECT_EQ(requests[0].holder(), "fetcher-1");
}

TEST_F(FetcherClientTest, LeaseWaitConvertsCoordinatorTimeToRealTime) {
  time_scale_ = 100.0;  // the coordinator's clock runs 100x
  fake_.ScriptLease(Leases(0, kNow + 50));
  fake_.ScriptLease(Leases(1, kNow + 51));
  ASSERT_TRUE(Client()->Lease(1).ok());
  EXPECT_EQ(waits_.waits(), std::vector<absl::Duration>{absl::Seconds(0.5)});
}

TEST_F(FetcherClientTest, LeaseBacksOffWhenADueSlotFindsNoUrl) {
  for (int i = 0; i < 3; ++i) fake_.ScriptLease(Leases(0, kNow));
  fake_.ScriptLease(Leases(1, kNow + 1));
  ASSERT_TRUE(Client()->Lease(1).ok());
  EXPECT_EQ(waits_.waits(),
            (std::vector<absl::Duration>{absl::Milliseconds(10), absl::Milliseconds(20),
                                         absl::Milliseconds(40)}));
}

TEST_F(FetcherClientTest, LeaseGivesUpAfterMaxWait) {
  FetcherOptions f;
  f.max_wait = absl::Seconds(1);
  fake_.ScriptLease(Leases(0, kNow + 0.6));
  fake_.ScriptLease(Leases(0, kNow + 0.6));
  auto urls = Client(f)->Lease(1);
  ASSERT_TRUE(urls.ok()) << urls.status();
  EXPECT_TRUE(urls->empty());
  EXPECT_EQ(fake_.calls("Lease"), 2);
}

TEST_F(FetcherClientTest, LeaseAsksAgainAfterUnavailableOnly) {
  fake_.FailNext(2, grpc::StatusCode::UNAVAILABLE);
  fake_.ScriptLease(Leases(2, kNow + 1));
  auto urls = Client()->Lease(2);
  ASSERT_TRUE(urls.ok()) << urls.status();
  EXPECT_EQ(urls->size(), 2u);
  EXPECT_EQ(fake_.calls("Lease"), 3);

  // A deadline or a permission error may mean the lease happened, or will
  // never: returned as is, not resent.
  fake_.FailNext(1, grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(Client()->Lease(2).status().code(), absl::StatusCode::kDeadlineExceeded);
  fake_.FailNext(1, grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Client()->Lease(2).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(fake_.calls("Lease"), 5);
}

TEST_F(FetcherClientTest, SendsTheTokenWithEveryCall) {
  fake_.ScriptLease(Leases(1, kNow + 1));
  ASSERT_TRUE(Client()->Lease(1).ok());
  EXPECT_EQ(fake_.tokens(), std::vector<std::string>{"Bearer test-token-0123456789"});
}

std::vector<CrawlReport> ReportsByLeaseId(int n) {
  std::vector<CrawlReport> reports(n);
  for (int i = 0; i < n; ++i) {
    reports[i].set_lease_id(100 + i);
    reports[i].set_outcome(i % 2 ? CRAWL_OUTCOME_CHANGED : CRAWL_OUTCOME_UNCHANGED);
  }
  return reports;
}

TEST_F(FetcherClientTest, ReportSplitsIntoBatchesAndIndexesErrors) {
  fake_.RejectLeaseIds({103});
  auto response = Client()->Report(ReportsByLeaseId(5));
  ASSERT_TRUE(response.ok()) << response.status();
  const auto requests = fake_.report_requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].reports_size(), 2);
  EXPECT_EQ(requests[2].reports_size(), 1);
  EXPECT_EQ(response->result().applied(), 4u);
  ASSERT_EQ(response->result().rejected_size(), 1);
  EXPECT_EQ(response->result().rejected(0).index(), 3u);
  EXPECT_EQ(response->result().rejected(0).code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(response->changed(), 1u);  // 101 (103 was rejected)
  EXPECT_EQ(response->unchanged(), 3u);
}

TEST_F(FetcherClientTest, ReportsByLeaseIdAreRetriedReportsByUrlAreNot) {
  fake_.FailNext(1, grpc::StatusCode::UNAVAILABLE);
  ASSERT_TRUE(Client()->Report(ReportsByLeaseId(1)).ok());
  EXPECT_EQ(fake_.calls("ReportCrawls"), 2);

  std::vector<CrawlReport> by_url(1);
  by_url[0].set_url("https://example.com/a");
  by_url[0].set_outcome(CRAWL_OUTCOME_CHANGED);
  fake_.FailNext(1, grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Client()->Report(by_url).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(fake_.calls("ReportCrawls"), 3);
}

TEST_F(FetcherClientTest, StreamLeasesReopensAnEndedStream) {
  const FetchLeaseResponse three = Leases(3, kNow);
  fake_.SetStreamedLeases({three.leases().begin(), three.leases().end()});
  std::vector<uint64_t> ids;
  absl::Status status = Client()->StreamLeases([&](const CoordinatorLease& lease) {
    ids.push_back(lease.lease_id());
    return ids.size() < 5;
  });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(ids, (std::vector<uint64_t>{100, 101, 102, 100, 101}));
  EXPECT_EQ(fake_.calls("StreamLeases"), 2);
}

TEST_F(FetcherClientTest, StreamLeasesReturnsAPermanentError) {
  fake_.FailNext(1, grpc::StatusCode::PERMISSION_DENIED);
  absl::Status status = Client()->StreamLeases([](const CoordinatorLease&) { return true; });
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(FetcherClientTest, ReconnectsAfterTheServerRestartsOnTheSamePort) {
  auto client = Client();
  fake_.ScriptLease(Leases(1, kNow + 1));
  ASSERT_TRUE(client->Lease(1).ok());
  const int port = server_.port();
  server_.Stop();
  waits_.OnFirstWait([&] { server_.Start(); });
  fake_.ScriptLease(Leases(2, kNow + 2));
  auto urls = client->Lease(2);
  ASSERT_TRUE(urls.ok()) << urls.status();
  EXPECT_EQ(urls->size(), 2u);
  EXPECT_EQ(server_.port(), port);
  EXPECT_FALSE(waits_.waits().empty());
}

}  // namespace
}  // namespace client
}  // namespace recrawl
