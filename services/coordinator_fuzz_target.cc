// Fuzz target of the coordinator's request handlers (libFuzzer entry point;
// coordinator_fuzz_test.cc drives the same function deterministically).
//
// One cluster lives across inputs, as a long-running server: two shards
// (the real core on temporary stores behind ShardServiceImpl) and the
// CoordinatorServiceImpl, each served by gRPC on a loopback port in this
// process, so that every request goes the whole way — the coordinator's
// checks, routing by host, per-item status mapping, the shard calls and the
// shards' own checks. An input is a sequence of operations framed as in
// shard/fuzz_input.h; the payload is parsed as the request of that kind
// (a payload that does not parse is sent as the empty request). The clock
// is real time (the coordinator's pacing needs it to advance), so the
// framing's clock step is ignored. After every operation both servers must
// still answer, both shards be live and the cluster's numbers be sane;
// sanitizers catch the rest.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/credentials.h"
#include "coordinator/coordinator.h"
#include "grpcpp/grpcpp.h"
#include "proto/coordinator.grpc.pb.h"
#include "services/auth.h"
#include "services/clock.h"
#include "services/coordinator_metrics.h"
#include "services/coordinator_service.h"
#include "services/coordinator_shards.h"
#include "services/shard_metrics.h"
#include "services/shard_service.h"
#include "shard/fuzz_input.h"
#include "shard/shard.h"
#include "shard/store/url_store.h"

namespace recrawl {
namespace services {
namespace {

constexpr int kShards = 2;

// A broken invariant: says which, then aborts (libFuzzer keeps the input).
[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "coordinator fuzz target: %s\n", what.c_str());
  std::abort();
}

// Serves `service` on a free loopback port.
std::unique_ptr<grpc::Server> Serve(grpc::Service* service, int* port) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), port);
  builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || *port == 0) Fail("cannot serve on loopback");
  return server;
}

struct FuzzedShard {
  FuzzedShard(int index, const std::string& dir, double now, const Clock* clock) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    absl::StatusOr<std::unique_ptr<shard::UrlStore>> store = shard::UrlStore::Open(dir);
    if (!store.ok()) Fail(store.status().ToString());
    shard::ShardOptions options;
    options.shard_index = static_cast<uint32_t>(index);
    options.num_shards = kShards;
    options.max_batch_items = 64;
    options.register_unknown_urls = true;
    options.failure_backoff = 5;
    absl::StatusOr<std::unique_ptr<shard::Shard>> opened =
        shard::Shard::Open(*std::move(store), options, now);
    if (!opened.ok()) Fail(opened.status().ToString());
    core = *std::move(opened);
    service = std::make_unique<ShardServiceImpl>(core.get(), clock, &authorizer, &metrics);
    server = Serve(service.get(), &port);
  }

  std::unique_ptr<shard::Shard> core;
  Authorizer authorizer;  // checks nothing
  ShardMetrics metrics;
  std::unique_ptr<ShardServiceImpl> service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

class FuzzedCluster {
 public:
  FuzzedCluster()
      : dir_((std::filesystem::temp_directory_path() /
              absl::StrCat("recrawl_coordinator_fuzz_", getpid()))
                 .string()),
        clock_(1.0, 1.7e9),
        channels_(grpc::InsecureChannelCredentials(), client::ClientTlsOptions{}, "") {
    for (int s = 0; s < kShards; ++s) {
      shards_.push_back(
          std::make_unique<FuzzedShard>(s, absl::StrCat(dir_, "/shard", s), clock_.Now(), &clock_));
      addresses_.push_back(absl::StrCat("127.0.0.1:", shards_[s]->port));
    }
    coordinator::CoordinatorOptions options;
    options.num_shards = kShards;
    options.bandwidth = 1000;
    core_ = std::make_unique<coordinator::Coordinator>(options, clock_.Now());
    CoordinatorServiceOptions service_options;
    service_options.max_lease_batch = 100;
    service_options.max_batch_items = 64;
    service_options.shard_deadline = 5.0;  // sanitizers are slow
    service_options.probe_deadline = 5.0;
    service_options.max_held_reports = 1000;
    service_ = std::make_unique<CoordinatorServiceImpl>(core_.get(), &clock_, &channels_,
                                                        &authorizer_, &metrics_, service_options);
    int port = 0;
    server_ = Serve(service_.get(), &port);
    stub_ = CoordinatorService::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
    if (service_->Probe(addresses_) != kShards) Fail("a shard is out at start");
  }

  // Never destroyed (libFuzzer exits the process); the stores are left in
  // the temporary directory.

  void Run(const uint8_t* data, size_t size) {
    shard::ForEachFuzzOp(
        data, size,
        [this](uint8_t kind, uint8_t /*clock_step*/, const uint8_t* payload, size_t len) {
          Apply(kind, payload, len);
          CheckInvariants();
        });
  }

 private:
  template <typename Message>
  static Message Parse(const uint8_t* data, size_t len) {
    return shard::ParseOrEmpty<Message>(data, len);
  }

  static void Prepare(grpc::ClientContext* context) {
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  }

  template <typename Request, typename Response, typename Method>
  void Call(Method method, const uint8_t* data, size_t len) {
    const Request request = Parse<Request>(data, len);
    Response response;
    grpc::ClientContext context;
    Prepare(&context);
    const grpc::Status status = (stub_.get()->*method)(&context, request, &response);
    // Only the client's own deadline may cut a call short: the servers
    // answer every request, with an error or not.
    if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      Fail(absl::StrCat(Request::descriptor()->name(), ": no answer within 30 s"));
    }
  }

  void Apply(uint8_t kind, const uint8_t* data, size_t len) {
    using Stub = CoordinatorService::Stub;
    switch (kind % 12) {
      case 0:
        Call<UpsertUrlsRequest, UpsertUrlsResponse>(&Stub::UpsertUrls, data, len);
        break;
      case 1:
        Call<DeleteUrlsRequest, DeleteUrlsResponse>(&Stub::DeleteUrls, data, len);
        break;
      case 2:
        Signals(Parse<SignalBatch>(data, len));
        break;
      case 3:
        Call<FetchLeaseRequest, FetchLeaseResponse>(&Stub::Lease, data, len);
        break;
      case 4:
        Call<ReportCrawlsRequest, ReportCrawlsResponse>(&Stub::ReportCrawls, data, len);
        break;
      case 5:
        Call<GetUrlStateRequest, UrlState>(&Stub::GetUrlState, data, len);
        break;
      case 6:
        Call<SetHostPolitenessRequest, SetHostPolitenessResponse>(&Stub::SetHostPoliteness, data,
                                                                  len);
        break;
      case 7:
        Call<SetPolicyRequest, SetPolicyResponse>(&Stub::SetPolicy, data, len);
        break;
      case 8:
        Call<SetBandwidthRequest, BandwidthState>(&Stub::SetBandwidth, data, len);
        break;
      case 9:
        Call<GetShardMapRequest, ShardMap>(&Stub::GetShardMap, data, len);
        break;
      case 10:
        StreamLeases(Parse<StreamLeasesRequest>(data, len));
        break;
      case 11:
        service_->Probe(addresses_);
        break;
    }
  }

  void Signals(const SignalBatch& batch) {
    grpc::ClientContext context;
    Prepare(&context);
    auto stream = stub_->StreamSignals(&context);
    stream->Write(batch);
    stream->WritesDone();
    SignalBatchAck ack;
    while (stream->Read(&ack)) {
    }
    if (stream->Finish().error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      Fail("StreamSignals: no answer within 30 s");
    }
  }

  // Takes at most two URLs from the lease stream, or waits 50 ms.
  void StreamLeases(const StreamLeasesRequest& request) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(50));
    auto reader = stub_->StreamLeases(&context, request);
    CoordinatorLease lease;
    for (int i = 0; i < 2 && reader->Read(&lease); ++i) {
    }
    context.TryCancel();
    (void)reader->Finish();
  }

  void CheckInvariants() {
    // A shard that a call timed out on is out until the next probe.
    if (service_->Probe(addresses_) != kShards) Fail("a shard is out");
    grpc::ClientContext context;
    Prepare(&context);
    ClusterStats stats;
    const grpc::Status status = stub_->GetClusterStats(&context, GetClusterStatsRequest(), &stats);
    if (!status.ok()) Fail("GetClusterStats: " + status.error_message());
    if (stats.live_shards() != kShards) Fail(stats.DebugString());
    if (!(std::isfinite(stats.bandwidth()) && stats.bandwidth() > 0.0)) {
      Fail(stats.DebugString());
    }
    if (stats.total().leases_in_flight() > stats.total().urls()) {
      Fail(stats.DebugString());
    }
  }

  const std::string dir_;
  const Clock clock_;
  ShardChannels channels_;
  Authorizer authorizer_;  // checks off
  CoordinatorMetrics metrics_;
  std::vector<std::unique_ptr<FuzzedShard>> shards_;
  std::vector<std::string> addresses_;
  std::unique_ptr<coordinator::Coordinator> core_;
  std::unique_ptr<CoordinatorServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<CoordinatorService::Stub> stub_;
};

}  // namespace
}  // namespace services
}  // namespace recrawl

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static recrawl::services::FuzzedCluster* cluster = new recrawl::services::FuzzedCluster;
  cluster->Run(data, size);
  return 0;
}
