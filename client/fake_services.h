// Test doubles of the coordinator and a shard for the client tests: they
// record what they were sent, answer from a script, fail on demand, and run
// on a loopback port that survives a restart (so that a test can stop the
// server under a client and start it again).
#ifndef RECRAWL_CLIENT_FAKE_SERVICES_H_
#define RECRAWL_CLIENT_FAKE_SERVICES_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "proto/coordinator.grpc.pb.h"
#include "proto/shard.grpc.pb.h"

namespace recrawl {
namespace client {

// What a StreamSignals handler does with batches, shared by both fakes: a
// signal is counted once per (URL, time, source), later copies are
// duplicates; URLs containing "bad" are rejected as INVALID_ARGUMENT.
class FakeSignalSink {
 public:
  // Serves one stream.
  grpc::Status Serve(grpc::ServerReaderWriterInterface<SignalBatchAck, SignalBatch>* stream);
  // The next stream ends with UNAVAILABLE after it has applied its
  // `batches`-th batch, before acknowledging it (the ack is lost).
  void BreakNextStreamAfter(int batches);
  // Streams end at once with `code`.
  void RefuseStreams(grpc::StatusCode code);
  // The first time a URL containing "flaky" comes, it is rejected with
  // UNAVAILABLE (as the coordinator does for a shard that is out).
  void FailFlakyUrlsOnce() {
    absl::MutexLock lock(&mu_);
    fail_flaky_ = true;
  }

  std::vector<int> batch_sizes() const;
  std::vector<uint64_t> sequences() const;
  std::set<std::string> counted_urls() const;
  int64_t counted() const;
  int64_t duplicates() const;
  std::vector<double> times() const;

 private:
  mutable absl::Mutex mu_;
  int break_after_ ABSL_GUARDED_BY(mu_) = 0;
  grpc::StatusCode refuse_ ABSL_GUARDED_BY(mu_) = grpc::StatusCode::OK;
  std::vector<int> batch_sizes_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> sequences_ ABSL_GUARDED_BY(mu_);
  std::set<std::tuple<std::string, double, int>> seen_ ABSL_GUARDED_BY(mu_);
  std::vector<double> times_ ABSL_GUARDED_BY(mu_);
  int64_t duplicates_ ABSL_GUARDED_BY(mu_) = 0;
  bool fail_flaky_ ABSL_GUARDED_BY(mu_) = false;
  std::set<std::string> flaky_seen_ ABSL_GUARDED_BY(mu_);
};

class FakeCoordinator final : public CoordinatorService::Service {
 public:
  // The next `n` unary calls fail with `code`.
  void FailNext(int n, grpc::StatusCode code);
  // Lease answers, in order; when they run out, no URL and
  // next_slot_time 0.
  void ScriptLease(FetchLeaseResponse response);
  // StreamLeases sends these, then ends the stream (OK).
  void SetStreamedLeases(std::vector<CoordinatorLease> leases);
  void SetShardMap(ShardMap map);
  // Reports of these lease ids, and URLs containing "bad", are rejected
  // (NOT_FOUND / INVALID_ARGUMENT).
  void RejectLeaseIds(std::set<uint64_t> ids);

  FakeSignalSink& signals() { return signals_; }
  int calls(const std::string& method) const;
  std::vector<std::string> tokens() const;
  std::vector<FetchLeaseRequest> lease_requests() const;
  std::vector<ReportCrawlsRequest> report_requests() const;
  std::vector<UpsertUrlsRequest> upsert_requests() const;
  std::vector<SetBandwidthRequest> bandwidth_requests() const;
  std::vector<SetHostPolitenessRequest> politeness_requests() const;

  grpc::Status Lease(grpc::ServerContext*, const FetchLeaseRequest*, FetchLeaseResponse*) override;
  grpc::Status StreamLeases(grpc::ServerContext*, const StreamLeasesRequest*,
                            grpc::ServerWriter<CoordinatorLease>*) override;
  grpc::Status ReportCrawls(grpc::ServerContext*, const ReportCrawlsRequest*,
                            ReportCrawlsResponse*) override;
  grpc::Status StreamSignals(grpc::ServerContext*,
                             grpc::ServerReaderWriter<SignalBatchAck, SignalBatch>*) override;
  grpc::Status GetShardMap(grpc::ServerContext*, const GetShardMapRequest*, ShardMap*) override;
  grpc::Status SetBandwidth(grpc::ServerContext*, const SetBandwidthRequest*,
                            BandwidthState*) override;
  grpc::Status GetBandwidth(grpc::ServerContext*, const GetBandwidthRequest*,
                            BandwidthState*) override;
  grpc::Status GetClusterStats(grpc::ServerContext*, const GetClusterStatsRequest*,
                               ClusterStats*) override;
  grpc::Status UpsertUrls(grpc::ServerContext*, const UpsertUrlsRequest*,
                          UpsertUrlsResponse*) override;
  grpc::Status DeleteUrls(grpc::ServerContext*, const DeleteUrlsRequest*,
                          DeleteUrlsResponse*) override;
  grpc::Status GetUrlState(grpc::ServerContext*, const GetUrlStateRequest*, UrlState*) override;
  grpc::Status SetHostPoliteness(grpc::ServerContext*, const SetHostPolitenessRequest*,
                                 SetHostPolitenessResponse*) override;
  grpc::Status SetPolicy(grpc::ServerContext*, const SetPolicyRequest*,
                         SetPolicyResponse*) override;

 private:
  // Counts the call and its token; a failure from FailNext, else OK.
  grpc::Status Enter(grpc::ServerContext* context, const std::string& method);

  FakeSignalSink signals_;
  mutable absl::Mutex mu_;
  int fail_left_ ABSL_GUARDED_BY(mu_) = 0;
  grpc::StatusCode fail_code_ ABSL_GUARDED_BY(mu_) = grpc::StatusCode::OK;
  std::deque<FetchLeaseResponse> lease_script_ ABSL_GUARDED_BY(mu_);
  std::vector<CoordinatorLease> streamed_ ABSL_GUARDED_BY(mu_);
  ShardMap shard_map_ ABSL_GUARDED_BY(mu_);
  std::set<uint64_t> rejected_ids_ ABSL_GUARDED_BY(mu_);
  BandwidthState bandwidth_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> urls_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<std::string, std::string>> calls_ ABSL_GUARDED_BY(mu_);
  std::vector<FetchLeaseRequest> lease_requests_ ABSL_GUARDED_BY(mu_);
  std::vector<ReportCrawlsRequest> report_requests_ ABSL_GUARDED_BY(mu_);
  std::vector<UpsertUrlsRequest> upsert_requests_ ABSL_GUARDED_BY(mu_);
  std::vector<SetBandwidthRequest> bandwidth_requests_ ABSL_GUARDED_BY(mu_);
  std::vector<SetHostPolitenessRequest> politeness_requests_ ABSL_GUARDED_BY(mu_);
};

// A shard that only takes signals.
class FakeShard final : public ShardService::Service {
 public:
  FakeSignalSink& signals() { return signals_; }
  grpc::Status StreamSignals(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<SignalBatchAck, SignalBatch>* stream) override {
    return signals_.Serve(stream);
  }

 private:
  FakeSignalSink signals_;
};

// A gRPC server for one service on 127.0.0.1; Stop and Start again keep the
// port.
class FakeServer {
 public:
  explicit FakeServer(grpc::Service* service) : service_(service) {}
  ~FakeServer() { Stop(); }
  // The first start picks a free port.
  void Start();
  void Stop();
  int port() const { return port_; }
  std::string target() const;

 private:
  grpc::Service* service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace client
}  // namespace recrawl

#endif  // RECRAWL_CLIENT_FAKE_SERVICES_H_
