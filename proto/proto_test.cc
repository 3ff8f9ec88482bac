// The generated wire API links and works: messages round-trip, the service
// stubs talk to a server, and the server carries the standard health and
// reflection services the operators' tools rely on.
#include <memory>
#include <string>
#include <vector>

#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "gtest/gtest.h"
#include "proto/common.pb.h"
#include "proto/health.grpc.pb.h"
#include "proto/shard.grpc.pb.h"
#include "proto/shard.pb.h"

namespace recrawl {
namespace {

TEST(ProtoTest, SignalBatchRoundTrips) {
  SignalBatch batch;
  batch.set_sequence(42);
  batch.set_sync(true);
  Signal* signal = batch.add_signals();
  signal->set_url("https://example.com/a");
  signal->set_time(1.7e9 + 0.25);
  signal->set_source(SIGNAL_SOURCE_INDEXNOW);

  std::string wire;
  ASSERT_TRUE(batch.SerializeToString(&wire));
  SignalBatch parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_EQ(parsed.sequence(), 42u);
  EXPECT_TRUE(parsed.sync());
  ASSERT_EQ(parsed.signals_size(), 1);
  EXPECT_EQ(parsed.signals(0).url(), "https://example.com/a");
  EXPECT_EQ(parsed.signals(0).time(), 1.7e9 + 0.25);
  EXPECT_EQ(parsed.signals(0).source(), SIGNAL_SOURCE_INDEXNOW);
}

TEST(ProtoTest, ReportTargetIsOneOf) {
  CrawlReport report;
  report.set_url("https://example.com/");
  report.set_lease_id(7);  // replaces the URL
  EXPECT_EQ(report.target_case(), CrawlReport::kLeaseId);
  EXPECT_TRUE(report.url().empty());

  std::string wire;
  ASSERT_TRUE(report.SerializeToString(&wire));
  CrawlReport parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_EQ(parsed.target_case(), CrawlReport::kLeaseId);
  EXPECT_EQ(parsed.lease_id(), 7u);
}

TEST(ProtoTest, OptionalFieldsDistinguishUnsetFromZero) {
  // Priors and politeness rely on this: 0 is a valid value that must replace
  // the stored one, while an unset field keeps it.
  UrlSpec spec;
  spec.mutable_prior()->set_recall(0.0);
  std::string wire;
  ASSERT_TRUE(spec.SerializeToString(&wire));
  UrlSpec parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_TRUE(parsed.prior().has_recall());
  EXPECT_FALSE(parsed.prior().has_change_rate());
  EXPECT_FALSE(parsed.has_last_crawl_time());
}

class InProcessServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ = server_->InProcessChannel(grpc::ChannelArguments());
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  // The generated base class answers every RPC with UNIMPLEMENTED.
  ShardService::Service service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(InProcessServerTest, StubReachesService) {
  std::unique_ptr<ShardService::Stub> stub = ShardService::NewStub(channel_);
  grpc::ClientContext context;
  GetStatsRequest request;
  ShardStats stats;
  grpc::Status status = stub->GetStats(&context, request, &stats);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

TEST_F(InProcessServerTest, HealthCheckServes) {
  std::unique_ptr<grpc::health::v1::Health::Stub> stub =
      grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext context;
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  server_->GetHealthCheckService()->SetServingStatus(false);
  grpc::ClientContext context2;
  ASSERT_TRUE(stub->Check(&context2, request, &response).ok());
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
}

// Waits for the next completion on `cq` and checks it is `tag`.
bool Await(grpc::CompletionQueue& cq, intptr_t tag) {
  void* got = nullptr;
  bool ok = false;
  if (!cq.Next(&got, &ok)) return false;
  return ok && got == reinterpret_cast<void*>(tag);
}

TEST_F(InProcessServerTest, ReflectionListsShardService) {
  // Debian ships no client for the reflection protocol, so the request is
  // hand-encoded: ServerReflectionRequest{list_services: ""} is field 7,
  // length-delimited, empty.
  const std::string request_bytes("\x3a\x00", 2);
  grpc::CompletionQueue cq;
  grpc::GenericStub stub(channel_);
  grpc::ClientContext context;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call = stub.PrepareCall(
      &context, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  call->StartCall(reinterpret_cast<void*>(1));
  ASSERT_TRUE(Await(cq, 1));
  grpc::Slice slice(request_bytes);
  grpc::ByteBuffer request(&slice, 1);
  call->Write(request, reinterpret_cast<void*>(2));
  ASSERT_TRUE(Await(cq, 2));
  call->WritesDone(reinterpret_cast<void*>(3));
  ASSERT_TRUE(Await(cq, 3));
  grpc::ByteBuffer response;
  call->Read(&response, reinterpret_cast<void*>(4));
  ASSERT_TRUE(Await(cq, 4));
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  ASSERT_TRUE(Await(cq, 5));
  EXPECT_TRUE(status.ok()) << status.error_message();

  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& s : slices) {
    bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  EXPECT_NE(bytes.find("recrawl.ShardService"), std::string::npos);
  EXPECT_NE(bytes.find("grpc.health.v1.Health"), std::string::npos);

  cq.Shutdown();
  void* tag;
  bool ok;
  while (cq.Next(&tag, &ok)) {
  }
}

}  // namespace
}  // namespace recrawl
