#include "client/credentials.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace recrawl {
namespace client {

using cluster::ReadFlagFile;
using cluster::Role;
using cluster::TokenTable;
using cluster::ValidateToken;

absl::StatusOr<std::string> ClientTokenFromFile(const std::string& path, Role role) {
  absl::StatusOr<std::string> text = ReadFlagFile(path, "token_file");
  if (!text.ok()) return text.status();
  const absl::string_view stripped = absl::StripAsciiWhitespace(*text);
  // A single token: one line, one field.
  if (!stripped.empty() && stripped.find_first_of(" \t\r\n") == absl::string_view::npos &&
      stripped[0] != '#') {
    if (absl::Status s = ValidateToken(stripped); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", s.message()));
    }
    return std::string(stripped);
  }
  absl::StatusOr<TokenTable> table = TokenTable::Parse(*text);
  if (!table.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", table.status().message()));
  }
  std::string token = table->TokenOf(role);
  if (token.empty()) {
    return absl::NotFoundError(
        absl::StrCat(path, ": no token of role ", cluster::RoleName(role), " (--role)"));
  }
  return token;
}

void AttachToken(grpc::ClientContext* context, const std::string& token) {
  if (!token.empty()) context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const ClientTlsOptions& options) {
  if (options.ca_file.empty()) {
    if (!options.cert_file.empty()) return absl::InvalidArgumentError("tls_cert: needs tls_ca");
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions ssl;
  absl::StatusOr<std::string> ca = ReadFlagFile(options.ca_file, "tls_ca");
  if (!ca.ok()) return ca.status();
  ssl.pem_root_certs = *ca;
  if (!options.cert_file.empty()) {
    absl::StatusOr<std::string> cert = ReadFlagFile(options.cert_file, "tls_cert");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadFlagFile(options.key_file, "tls_key");
    if (!key.ok()) return key.status();
    ssl.pem_cert_chain = *cert;
    ssl.pem_private_key = *key;
  }
  return grpc::SslCredentials(ssl);
}

std::shared_ptr<grpc::Channel> CreateChannelFor(
    const std::string& address, const std::shared_ptr<grpc::ChannelCredentials>& credentials,
    const ClientTlsOptions& options, grpc::ChannelArguments args) {
  if (!options.server_name.empty()) args.SetSslTargetNameOverride(options.server_name);
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(address, credentials, args);
}

}  // namespace client
}  // namespace recrawl
