// Role tokens and TLS on a real in-process gRPC server: the ShardService
// (internal role only) over a shard core on a temporary store, and the token
// table's parsing and messages.
#include "services/auth.h"

#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/credentials.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/shard.grpc.pb.h"
#include "services/clock.h"
#include "services/empty_call.h"
#include "services/shard_metrics.h"
#include "services/shard_service.h"
#include "services/test_certificates.h"
#include "shard/shard.h"
#include "shard/store/url_store.h"

namespace recrawl {
namespace services {
namespace {

using ::testing::HasSubstr;

constexpr char kTokens[] =
    "# test tokens\n"
    "internal  internal-token-0123456789\n"
    "fetcher fetcher-token-0123456789\n"
    "\n"
    "operator operator-token-0123456789\n";

TEST(TokenTableTest, ParsesRolesAndRejectsBadLines) {
  absl::StatusOr<cluster::TokenTable> table = cluster::TokenTable::Parse(kTokens);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->size(), 3u);
  cluster::Role role;
  ASSERT_TRUE(table->Find("operator-token-0123456789", &role));
  EXPECT_EQ(role, cluster::Role::kOperator);
  EXPECT_FALSE(table->Find("operator-token-012345678", &role));
  EXPECT_EQ(table->TokenOf(cluster::Role::kInternal), "internal-token-0123456789");
  EXPECT_EQ(table->TokenOf(cluster::Role::kPinger), "");

  EXPECT_THAT(cluster::TokenTable::Parse("admin some-token-0123456789\n").status().message(),
              HasSubstr("line 1: role: must be fetcher, pinger, operator or internal"));
  EXPECT_THAT(cluster::TokenTable::Parse("\nfetcher short\n").status().message(),
              HasSubstr("line 2: token: must have 16"));
  EXPECT_THAT(cluster::TokenTable::Parse("fetcher a b\n").status().message(),
              HasSubstr("expected \"<role> <token>\""));
  EXPECT_THAT(
      cluster::TokenTable::Parse("fetcher same-token-0123456789\npinger same-token-0123456789\n")
          .status()
          .message(),
      HasSubstr("already listed for role fetcher"));
}

TEST(RolesTest, NamesTheRoles) {
  EXPECT_EQ((cluster::Roles{cluster::Role::kOperator}).ToString(), "operator");
  EXPECT_EQ(
      (cluster::Roles{cluster::Role::kFetcher, cluster::Role::kOperator, cluster::Role::kInternal})
          .ToString(),
      "fetcher, operator or internal");
  EXPECT_TRUE(cluster::Roles::All().Has(cluster::Role::kPinger));
  EXPECT_FALSE((cluster::Roles{cluster::Role::kFetcher}).Has(cluster::Role::kPinger));
}

class AuthServerTest : public ::testing::Test {
 protected:
  // Starts shard 7 of 8 behind the check with `credentials`.
  void StartServer(std::shared_ptr<grpc::ServerCredentials> credentials) {
    const std::string dir =
        absl::StrCat(::testing::TempDir(), "auth_",
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    absl::StatusOr<std::unique_ptr<shard::UrlStore>> store = shard::UrlStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    shard::ShardOptions options;
    options.shard_index = 7;
    options.num_shards = 8;
    absl::StatusOr<std::unique_ptr<shard::Shard>> opened =
        shard::Shard::Open(*std::move(store), options, clock_.Now());
    ASSERT_TRUE(opened.ok()) << opened.status();
    shard_ = *std::move(opened);
    authorizer_ = Authorizer(*cluster::TokenTable::Parse(kTokens));
    service_ = std::make_unique<ShardServiceImpl>(shard_.get(), &clock_, &authorizer_, &metrics_);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", std::move(credentials), &port_);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }

  grpc::Status GetStats(const std::shared_ptr<grpc::Channel>& channel, const std::string& token) {
    auto stub = ShardService::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    client::AttachToken(&context, token);
    ShardStats stats;
    grpc::Status s = stub->GetStats(&context, GetStatsRequest(), &stats);
    if (s.ok()) {
      EXPECT_EQ(stats.shard_index(), 7u);
    }
    return s;
  }

  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

  Clock clock_{1.0, Clock::UnixNow()};
  std::unique_ptr<shard::Shard> shard_;
  Authorizer authorizer_;
  ShardMetrics metrics_;
  std::unique_ptr<ShardServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

TEST_F(AuthServerTest, TokensAndRoles) {
  StartServer(grpc::InsecureServerCredentials());
  auto channel = grpc::CreateChannel(address(), grpc::InsecureChannelCredentials());

  grpc::Status missing = GetStats(channel, "");
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(missing.error_message(), HasSubstr("GetStats needs a token of role internal"));

  grpc::Status unknown = GetStats(channel, "not-a-known-token-0123456789");
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(unknown.error_message(), HasSubstr("unknown token"));

  grpc::Status wrong_role = GetStats(channel, "operator-token-0123456789");
  EXPECT_EQ(wrong_role.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(wrong_role.error_message(),
              HasSubstr("needs a token of role internal, the caller's token has role operator"));

  EXPECT_TRUE(GetStats(channel, "internal-token-0123456789").ok());
}

// Every method of the service, found by its descriptor (so a method added
// later is covered too), refuses a fetcher's token before doing anything.
TEST_F(AuthServerTest, EveryShardMethodNeedsTheInternalRole) {
  StartServer(grpc::InsecureServerCredentials());
  auto channel = grpc::CreateChannel(address(), grpc::InsecureChannelCredentials());
  const std::vector<std::string> methods = MethodsOf(ShardService::service_full_name());
  ASSERT_GT(methods.size(), 10u);
  for (const std::string& method : methods) {
    const grpc::Status status = CallWithEmptyRequest(channel, ShardService::service_full_name(),
                                                     method, "fetcher-token-0123456789");
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << method;
    EXPECT_THAT(status.error_message(), HasSubstr(method + " needs a token of role internal"));
  }
}

TEST(AuthorizerTest, OffWithoutTokens) {
  Authorizer off;
  EXPECT_FALSE(off.enabled());
  grpc::ServerContext context;
  EXPECT_TRUE(off.Check(context, "Lease", {cluster::Role::kFetcher}).ok());
}

class TlsTest : public AuthServerTest {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "tls_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(MakeCertificate(dir_, "localhost").ok());
    ASSERT_TRUE(MakeCertificate(dir_, "client").ok());
  }

  std::shared_ptr<grpc::Channel> TlsChannel(bool with_client_cert) {
    client::ClientTlsOptions options;
    options.ca_file = dir_ + "/localhost.pem";
    options.server_name = "localhost";
    if (with_client_cert) {
      options.cert_file = dir_ + "/client.pem";
      options.key_file = dir_ + "/client.key";
    }
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
        client::ChannelCredentialsFor(options);
    EXPECT_TRUE(credentials.ok()) << credentials.status();
    return client::CreateChannelFor(address(), *credentials, options);
  }

  std::string dir_;
};

TEST_F(TlsTest, ServesTlsWithTokens) {
  ServerTlsOptions options;
  options.cert_file = dir_ + "/localhost.pem";
  options.key_file = dir_ + "/localhost.key";
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      ServerCredentialsFor(options);
  ASSERT_TRUE(credentials.ok()) << credentials.status();
  StartServer(*credentials);

  EXPECT_TRUE(GetStats(TlsChannel(false), "internal-token-0123456789").ok());
  EXPECT_EQ(GetStats(TlsChannel(false), "fetcher-token-0123456789").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // A plaintext client gets no answer from a TLS port.
  auto plaintext = grpc::CreateChannel(address(), grpc::InsecureChannelCredentials());
  EXPECT_EQ(GetStats(plaintext, "internal-token-0123456789").error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, RequiredClientCertificate) {
  ServerTlsOptions options;
  options.cert_file = dir_ + "/localhost.pem";
  options.key_file = dir_ + "/localhost.key";
  options.client_ca_file = dir_ + "/client.pem";  // self-signed: its own CA
  options.require_client_cert = true;
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      ServerCredentialsFor(options);
  ASSERT_TRUE(credentials.ok()) << credentials.status();
  StartServer(*credentials);

  EXPECT_TRUE(GetStats(TlsChannel(true), "internal-token-0123456789").ok());
  EXPECT_EQ(GetStats(TlsChannel(false), "internal-token-0123456789").error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST(TlsOptionsTest, ClearErrors) {
  ServerTlsOptions key_only;
  key_only.key_file = "/x.key";
  EXPECT_THAT(ServerCredentialsFor(key_only).status().message(), HasSubstr("need tls_cert"));
  ServerTlsOptions missing;
  missing.cert_file = "/nonexistent.pem";
  missing.key_file = "/nonexistent.key";
  EXPECT_THAT(ServerCredentialsFor(missing).status().message(),
              HasSubstr("tls_cert: cannot read /nonexistent.pem"));
}

}  // namespace
}  // namespace services
}  // namespace recrawl
