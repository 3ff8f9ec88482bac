// The real shard server process on loopback: a crawl cycle over gRPC
// (upsert → signals → peek → lease → report), errors as gRPC statuses,
// health, metrics, and a graceful SIGTERM after which a restart finds
// everything.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/health.grpc.pb.h"
#include "proto/shard.grpc.pb.h"
#include "services/clock.h"
#include "services/http_get.h"
#include "services/server_process.h"

namespace recrawl {
namespace services {
namespace {

using ::testing::HasSubstr;

class ShardServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "server_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    StartServer();
  }

  void StartServer() {
    ASSERT_TRUE(server_
                    .Start("services/shard_server",
                           {"--data_dir=" + dir_ + "/data", "--port=0", "--metrics_port=0",
                            "--host=127.0.0.1", "--max_batch_items=100", "--t_delay=5",
                            "--drain_seconds=2"},
                           dir_ + "/port", dir_ + "/log")
                    .ok())
        << Log();
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_.port()),
                                   grpc::InsecureChannelCredentials());
    stub_ = ShardService::NewStub(channel_);
  }

  std::string Log() const {
    std::ifstream in(dir_ + "/log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::string dir_;
  ServerProcess server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<ShardService::Stub> stub_;
};

TEST_F(ShardServerTest, CrawlCycleOverGrpc) {
  const double now = Clock::UnixNow();
  {
    grpc::ClientContext ctx;
    UpsertUrlsRequest req;
    for (const char* url : {"https://a.example/", "https://b.example/x"}) {
      UrlSpec* spec = req.add_urls();
      spec->set_url(url);
      spec->set_importance(1.0);
      spec->mutable_prior()->set_change_rate(1e-4);
      spec->set_last_crawl_time(now - 3600);
    }
    req.add_urls()->set_url("gopher://bad");
    UpsertUrlsResponse resp;
    ASSERT_TRUE(stub_->UpsertUrls(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.result().applied(), 2u);
    EXPECT_EQ(resp.created(), 2u);
    ASSERT_EQ(resp.result().rejected_size(), 1);
    EXPECT_EQ(resp.result().rejected(0).index(), 2u);
  }
  {
    // Two batches in flight on one stream, acknowledged in order.
    grpc::ClientContext ctx;
    auto stream = stub_->StreamSignals(&ctx);
    for (uint64_t seq : {7, 8}) {
      SignalBatch batch;
      batch.set_sequence(seq);
      Signal* s = batch.add_signals();
      s->set_url("https://b.example/x");
      s->set_time(now - 60 - seq);
      s->set_source(SIGNAL_SOURCE_INDEXNOW);
      ASSERT_TRUE(stream->Write(batch));
    }
    stream->WritesDone();
    SignalBatchAck ack;
    ASSERT_TRUE(stream->Read(&ack));
    EXPECT_EQ(ack.sequence(), 7u);
    EXPECT_EQ(ack.counted(), 1u);
    ASSERT_TRUE(stream->Read(&ack));
    EXPECT_EQ(ack.sequence(), 8u);
    EXPECT_FALSE(stream->Read(&ack));
    EXPECT_TRUE(stream->Finish().ok());
  }
  {
    grpc::ClientContext ctx;
    PeekTopRequest req;
    req.set_k(5);
    PeekTopResponse resp;
    ASSERT_TRUE(stub_->PeekTop(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.candidates_size(), 2);
    EXPECT_EQ(resp.candidates(0).url(), "https://b.example/x");  // signalled
  }
  uint64_t lease_id = 0;
  {
    grpc::ClientContext ctx;
    LeaseRequest req;
    req.add_slot_times(Clock::UnixNow());
    req.set_holder("fetcher-1");
    LeaseResponse resp;
    ASSERT_TRUE(stub_->Lease(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.leases_size(), 1);
    EXPECT_EQ(resp.leases(0).url(), "https://b.example/x");
    lease_id = resp.leases(0).lease_id();
  }
  {
    grpc::ClientContext ctx;
    ReportCrawlsRequest req;
    CrawlReport* r = req.add_reports();
    r->set_lease_id(lease_id);
    r->set_fetch_time(Clock::UnixNow());
    r->set_outcome(CRAWL_OUTCOME_CHANGED);
    r->set_content_digest("sha:1");
    ReportCrawlsResponse resp;
    ASSERT_TRUE(stub_->ReportCrawls(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.result().applied(), 1u);
    EXPECT_EQ(resp.changed(), 1u);
  }
  {
    grpc::ClientContext ctx;
    GetUrlStateRequest req;
    req.set_url("https://B.example/x#top");
    UrlState state;
    ASSERT_TRUE(stub_->GetUrlState(&ctx, req, &state).ok());
    EXPECT_EQ(state.url(), "https://b.example/x");
    EXPECT_EQ(state.observed_crawls(), 1u);
    EXPECT_EQ(state.signals_since_crawl(), 0u);
    EXPECT_EQ(state.content_digest(), "sha:1");
    EXPECT_FALSE(state.has_lease());
  }
  {
    grpc::ClientContext ctx;
    ShardStats stats;
    ASSERT_TRUE(stub_->GetStats(&ctx, GetStatsRequest(), &stats).ok());
    EXPECT_EQ(stats.urls(), 2u);
    EXPECT_EQ(stats.signals_total(), 2u);
    EXPECT_EQ(stats.leases_total(), 1u);
    EXPECT_EQ(stats.reports_total(), 1u);
    EXPECT_EQ(stats.t_delay(), 5.0);
  }
}

TEST_F(ShardServerTest, ErrorsAreGrpcStatusesNamingTheField) {
  grpc::ClientContext ctx;
  UpsertUrlsRequest req;
  for (int i = 0; i < 101; ++i) {
    req.add_urls()->set_url(absl::StrCat("https://a.example/", i));
  }
  UpsertUrlsResponse resp;
  const grpc::Status s = stub_->UpsertUrls(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("urls: 101 items"));

  grpc::ClientContext ctx2;
  LeaseRequest lease;
  lease.add_slot_times(std::nan(""));
  LeaseResponse lresp;
  const grpc::Status s2 = stub_->Lease(&ctx2, lease, &lresp);
  EXPECT_EQ(s2.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s2.error_message(), HasSubstr("slot_times[0]"));

  grpc::ClientContext ctx3;
  GetUrlStateRequest get;
  get.set_url("https://nowhere.example/");
  UrlState state;
  EXPECT_EQ(stub_->GetUrlState(&ctx3, get, &state).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(ShardServerTest, HealthMetricsAndGracefulShutdown) {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext ctx;
  grpc::health::v1::HealthCheckResponse h;
  ASSERT_TRUE(health->Check(&ctx, grpc::health::v1::HealthCheckRequest(), &h).ok());
  EXPECT_EQ(h.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  {
    grpc::ClientContext c;
    UpsertUrlsRequest req;
    req.add_urls()->set_url("https://kept.example/");
    UpsertUrlsResponse resp;
    ASSERT_TRUE(stub_->UpsertUrls(&c, req, &resp).ok());
  }
  const std::string metrics = HttpGet(server_.metrics_port(), "/metrics");
  EXPECT_THAT(metrics, HasSubstr("recrawl_shard_rpcs_total"));
  EXPECT_THAT(metrics, HasSubstr("method=\"UpsertUrls\""));
  EXPECT_THAT(metrics, HasSubstr("recrawl_shard_probe_leases_total 0"));

  const int status = server_.Stop(SIGTERM);
  ASSERT_TRUE(WIFEXITED(status)) << Log();
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_THAT(Log(), HasSubstr("draining"));
  EXPECT_THAT(Log(), HasSubstr("stopped"));

  StartServer();
  grpc::ClientContext c;
  GetUrlStateRequest get;
  get.set_url("https://kept.example/");
  UrlState state;
  EXPECT_TRUE(stub_->GetUrlState(&c, get, &state).ok());
}

}  // namespace
}  // namespace services
}  // namespace recrawl
