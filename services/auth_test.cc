// Role tokens and TLS on a real in-process gRPC server: ShardService behind
// AuthorizedShardService (internal role only) over a stand-in shard, and
// the token table's parsing and messages.
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
#include "services/authorized_shard_service.h"
#include "services/test_certificates.h"

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

// Answers GetStats with a fixed shard index: what is behind the check.
class StandInShard final : public ShardService::Service {
 public:
  grpc::Status GetStats(grpc::ServerContext*, const GetStatsRequest*,
                        ShardStats* response) override {
    response->set_shard_index(7);
    return grpc::Status::OK;
  }
};

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
  // Starts the stand-in shard behind the check with `credentials`.
  void StartServer(std::shared_ptr<grpc::ServerCredentials> credentials) {
    authorizer_ = Authorizer(*cluster::TokenTable::Parse(kTokens));
    authorized_ = std::make_unique<AuthorizedShardService>(&shard_, &authorizer_);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", std::move(credentials), &port_);
    builder.RegisterService(authorized_.get());
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

  StandInShard shard_;
  Authorizer authorizer_;
  std::unique_ptr<AuthorizedShardService> authorized_;
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

TEST_F(AuthServerTest, UnimplementedMethodsStayClosed) {
  StartServer(grpc::InsecureServerCredentials());
  auto stub =
      ShardService::NewStub(grpc::CreateChannel(address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  client::AttachToken(&context, "fetcher-token-0123456789");
  PeekTopResponse response;
  // The check comes first: a fetcher learns nothing about the method.
  EXPECT_EQ(stub->PeekTop(&context, PeekTopRequest(), &response).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
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
