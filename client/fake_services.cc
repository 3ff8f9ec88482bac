#include "client/fake_services.h"

#include <chrono>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace recrawl {
namespace client {

// ------------------------------------------------------------ signals

grpc::Status FakeSignalSink::Serve(
    grpc::ServerReaderWriterInterface<SignalBatchAck, SignalBatch>* stream) {
  int break_after;
  {
    absl::MutexLock lock(&mu_);
    if (refuse_ != grpc::StatusCode::OK) {
      return grpc::Status(refuse_, "refused by the fake");
    }
    break_after = std::exchange(break_after_, 0);
  }
  SignalBatch batch;
  for (int n = 1; stream->Read(&batch); ++n) {
    SignalBatchAck ack;
    ack.set_sequence(batch.sequence());
    {
      absl::MutexLock lock(&mu_);
      batch_sizes_.push_back(batch.signals_size());
      sequences_.push_back(batch.sequence());
      for (int i = 0; i < batch.signals_size(); ++i) {
        const Signal& s = batch.signals(i);
        if (absl::StrContains(s.url(), "bad")) {
          ItemStatus* item = ack.mutable_result()->add_rejected();
          item->set_index(i);
          item->set_code(grpc::StatusCode::INVALID_ARGUMENT);
          item->set_message("url: bad by the fake's rule");
          continue;
        }
        if (fail_flaky_ && absl::StrContains(s.url(), "flaky") &&
            flaky_seen_.insert(s.url()).second) {
          ItemStatus* item = ack.mutable_result()->add_rejected();
          item->set_index(i);
          item->set_code(grpc::StatusCode::UNAVAILABLE);
          item->set_message("shard out; resend the batch");
          continue;
        }
        times_.push_back(s.time());
        if (seen_.emplace(s.url(), s.time(), s.source()).second) {
          ack.set_counted(ack.counted() + 1);
        } else {
          ack.set_duplicate(ack.duplicate() + 1);
          ++duplicates_;
        }
        ack.mutable_result()->set_applied(ack.result().applied() + 1);
      }
    }
    if (n == break_after) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "fake break");
    }
    if (!stream->Write(ack)) break;
  }
  return grpc::Status::OK;
}

void FakeSignalSink::BreakNextStreamAfter(int batches) {
  absl::MutexLock lock(&mu_);
  break_after_ = batches;
}

void FakeSignalSink::RefuseStreams(grpc::StatusCode code) {
  absl::MutexLock lock(&mu_);
  refuse_ = code;
}

std::vector<int> FakeSignalSink::batch_sizes() const {
  absl::MutexLock lock(&mu_);
  return batch_sizes_;
}

std::vector<uint64_t> FakeSignalSink::sequences() const {
  absl::MutexLock lock(&mu_);
  return sequences_;
}

std::set<std::string> FakeSignalSink::counted_urls() const {
  absl::MutexLock lock(&mu_);
  std::set<std::string> urls;
  for (const auto& [url, time, source] : seen_) urls.insert(url);
  return urls;
}

int64_t FakeSignalSink::counted() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(seen_.size());
}

int64_t FakeSignalSink::duplicates() const {
  absl::MutexLock lock(&mu_);
  return duplicates_;
}

std::vector<double> FakeSignalSink::times() const {
  absl::MutexLock lock(&mu_);
  return times_;
}

// ------------------------------------------------------------ coordinator

void FakeCoordinator::FailNext(int n, grpc::StatusCode code) {
  absl::MutexLock lock(&mu_);
  fail_left_ = n;
  fail_code_ = code;
}

void FakeCoordinator::ScriptLease(FetchLeaseResponse response) {
  absl::MutexLock lock(&mu_);
  lease_script_.push_back(std::move(response));
}

void FakeCoordinator::SetStreamedLeases(std::vector<CoordinatorLease> leases) {
  absl::MutexLock lock(&mu_);
  streamed_ = std::move(leases);
}

void FakeCoordinator::SetShardMap(ShardMap map) {
  absl::MutexLock lock(&mu_);
  shard_map_ = std::move(map);
}

void FakeCoordinator::RejectLeaseIds(std::set<uint64_t> ids) {
  absl::MutexLock lock(&mu_);
  rejected_ids_ = std::move(ids);
}

int FakeCoordinator::calls(const std::string& method) const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const auto& call : calls_) n += call.first == method;
  return n;
}

std::vector<std::string> FakeCoordinator::tokens() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> tokens;
  for (const auto& call : calls_) tokens.push_back(call.second);
  return tokens;
}

std::vector<FetchLeaseRequest> FakeCoordinator::lease_requests() const {
  absl::MutexLock lock(&mu_);
  return lease_requests_;
}

std::vector<ReportCrawlsRequest> FakeCoordinator::report_requests() const {
  absl::MutexLock lock(&mu_);
  return report_requests_;
}

std::vector<UpsertUrlsRequest> FakeCoordinator::upsert_requests() const {
  absl::MutexLock lock(&mu_);
  return upsert_requests_;
}

std::vector<SetBandwidthRequest> FakeCoordinator::bandwidth_requests() const {
  absl::MutexLock lock(&mu_);
  return bandwidth_requests_;
}

std::vector<SetHostPolitenessRequest> FakeCoordinator::politeness_requests() const {
  absl::MutexLock lock(&mu_);
  return politeness_requests_;
}

grpc::Status FakeCoordinator::Enter(grpc::ServerContext* context, const std::string& method) {
  std::string token;
  const auto& metadata = context->client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    token = std::string(it->second.data(), it->second.size());
  }
  absl::MutexLock lock(&mu_);
  calls_.emplace_back(method, token);
  if (fail_left_ > 0) {
    --fail_left_;
    return grpc::Status(fail_code_, absl::StrCat(method, ": failed by the fake"));
  }
  return grpc::Status::OK;
}

grpc::Status FakeCoordinator::Lease(grpc::ServerContext* context, const FetchLeaseRequest* request,
                                    FetchLeaseResponse* response) {
  if (grpc::Status s = Enter(context, "Lease"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  lease_requests_.push_back(*request);
  if (!lease_script_.empty()) {
    *response = std::move(lease_script_.front());
    lease_script_.pop_front();
  }
  return grpc::Status::OK;
}

grpc::Status FakeCoordinator::StreamLeases(grpc::ServerContext* context,
                                           const StreamLeasesRequest* request,
                                           grpc::ServerWriter<CoordinatorLease>* writer) {
  if (grpc::Status s = Enter(context, "StreamLeases"); !s.ok()) return s;
  std::vector<CoordinatorLease> leases;
  {
    absl::MutexLock lock(&mu_);
    leases = streamed_;
  }
  for (const CoordinatorLease& lease : leases) {
    if (!writer->Write(lease)) break;
  }
  return grpc::Status::OK;
}

grpc::Status FakeCoordinator::ReportCrawls(grpc::ServerContext* context,
                                           const ReportCrawlsRequest* request,
                                           ReportCrawlsResponse* response) {
  if (grpc::Status s = Enter(context, "ReportCrawls"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  report_requests_.push_back(*request);
  BatchResult* result = response->mutable_result();
  for (int i = 0; i < request->reports_size(); ++i) {
    const CrawlReport& r = request->reports(i);
    if (rejected_ids_.count(r.lease_id()) > 0 || absl::StrContains(r.url(), "bad")) {
      ItemStatus* item = result->add_rejected();
      item->set_index(i);
      item->set_code(grpc::StatusCode::NOT_FOUND);
      item->set_message("lease_id: rejected by the fake");
      continue;
    }
    result->set_applied(result->applied() + 1);
    if (r.outcome() == CRAWL_OUTCOME_CHANGED) {
      response->set_changed(response->changed() + 1);
    } else {
      response->set_unchanged(response->unchanged() + 1);
    }
  }
  return grpc::Status::OK;
}

grpc::Status FakeCoordinator::StreamSignals(
    grpc::ServerContext* context, grpc::ServerReaderWriter<SignalBatchAck, SignalBatch>* stream) {
  if (grpc::Status s = Enter(context, "StreamSignals"); !s.ok()) return s;
  return signals_.Serve(stream);
}

grpc::Status FakeCoordinator::GetShardMap(grpc::ServerContext* context, const GetShardMapRequest*,
                                          ShardMap* response) {
  if (grpc::Status s = Enter(context, "GetShardMap"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  *response = shard_map_;
  return grpc::Status::OK;
}

grpc::Status FakeCoordinator::SetBandwidth(grpc::ServerContext* context,
                                           const SetBandwidthRequest* request,
                                           BandwidthState* response) {
  if (grpc::Status s = Enter(context, "SetBandwidth"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  bandwidth_requests_.push_back(*request);
  if (request->has_bandwidth()) {
    if (!(request->bandwidth() > 0)) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bandwidth: must be > 0");
    }
    bandwidth_.set_bandwidth(request->bandwidth());
  }
  if (request->mode() != COORDINATOR_MODE_UNSPECIFIED) {
    bandwidth_.set_mode(request->mode());
  }
  *response = bandwidth_;
  return grpc::Status::OK;
}

grpc::Status FakeCoordinator::GetBandwidth(grpc::ServerContext* context, const GetBandwidthRequest*,
                                           BandwidthState* response) {
  if (grpc::Status s = Enter(context, "GetBandwidth"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  *response = bandwidth_;
  return grpc::Status::OK;
}

grpc::Status FakeCoordinator::GetClusterStats(grpc::ServerContext* context,
                                              const GetClusterStatsRequest*,
                                              ClusterStats* response) {
  if (grpc::Status s = Enter(context, "GetClusterStats"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  response->set_time(1000.0);
  response->set_bandwidth(bandwidth_.bandwidth());
  response->set_mode(bandwidth_.mode());
  response->set_num_shards(2);
  response->set_live_shards(1);
  response->set_slots_handed_out(42);
  for (int s = 0; s < 2; ++s) {
    ShardStats* shard = response->add_shards();
    shard->set_shard_index(s);
    shard->set_num_shards(2);
    shard->set_urls(100 * (s + 1));
    shard->set_picks_per_second(1.5 * s);
    response->add_live(s == 0);
  }
  return grpc::Status::OK;
}

grpc::Status FakeCoordinator::UpsertUrls(grpc::ServerContext* context,
                                         const UpsertUrlsRequest* request,
                                         UpsertUrlsResponse* response) {
  if (grpc::Status s = Enter(context, "UpsertUrls"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  upsert_requests_.push_back(*request);
  BatchResult* result = response->mutable_result();
  for (int i = 0; i < request->urls_size(); ++i) {
    const UrlSpec& spec = request->urls(i);
    if (absl::StrContains(spec.url(), "bad")) {
      ItemStatus* item = result->add_rejected();
      item->set_index(i);
      item->set_code(grpc::StatusCode::INVALID_ARGUMENT);
      item->set_message("url: bad by the fake's rule");
      continue;
    }
    result->set_applied(result->applied() + 1);
    if (urls_.insert(spec.url()).second) {
      response->set_created(response->created() + 1);
    }
  }
  return grpc::Status::OK;
}

grpc::Status FakeCoordinator::DeleteUrls(grpc::ServerContext* context,
                                         const DeleteUrlsRequest* request,
                                         DeleteUrlsResponse* response) {
  if (grpc::Status s = Enter(context, "DeleteUrls"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  BatchResult* result = response->mutable_result();
  for (int i = 0; i < request->urls_size(); ++i) {
    if (urls_.erase(request->urls(i)) == 0) {
      ItemStatus* item = result->add_rejected();
      item->set_index(i);
      item->set_code(grpc::StatusCode::NOT_FOUND);
      item->set_message("url: not known");
      continue;
    }
    result->set_applied(result->applied() + 1);
  }
  return grpc::Status::OK;
}

grpc::Status FakeCoordinator::GetUrlState(grpc::ServerContext* context,
                                          const GetUrlStateRequest* request, UrlState* response) {
  if (grpc::Status s = Enter(context, "GetUrlState"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  if (urls_.count(request->url()) == 0) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("url: ", request->url(), " not known"));
  }
  response->set_url(request->url());
  response->set_importance(2.5);
  response->set_last_crawl_time(900.0);
  return grpc::Status::OK;
}

grpc::Status FakeCoordinator::SetHostPoliteness(grpc::ServerContext* context,
                                                const SetHostPolitenessRequest* request,
                                                SetHostPolitenessResponse* response) {
  if (grpc::Status s = Enter(context, "SetHostPoliteness"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  politeness_requests_.push_back(*request);
  response->mutable_result()->set_applied(request->hosts_size());
  return grpc::Status::OK;
}

grpc::Status FakeCoordinator::SetPolicy(grpc::ServerContext* context,
                                        const SetPolicyRequest* request,
                                        SetPolicyResponse* response) {
  if (grpc::Status s = Enter(context, "SetPolicy"); !s.ok()) return s;
  *response->mutable_policy() = request->policy();
  response->set_t_delay(request->has_t_delay() ? request->t_delay() : 0.0);
  return grpc::Status::OK;
}

// ------------------------------------------------------------ server

void FakeServer::Start() {
  grpc::ServerBuilder builder;
  int chosen = 0;
  builder.AddListeningPort(absl::StrCat("127.0.0.1:", port_), grpc::InsecureServerCredentials(),
                           &chosen);
  builder.RegisterService(service_);
  server_ = builder.BuildAndStart();
  port_ = chosen;
}

void FakeServer::Stop() {
  if (server_ == nullptr) return;
  // Calls in flight (open streams) are cancelled at once.
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
  server_.reset();
}

std::string FakeServer::target() const { return absl::StrCat("127.0.0.1:", port_); }

}  // namespace client
}  // namespace recrawl
