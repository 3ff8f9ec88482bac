#include "services/auth.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace recrawl {
namespace services {

using cluster::ReadFlagFile;
using cluster::Role;
using cluster::RoleName;
using cluster::Roles;

grpc::Status Authorizer::Check(const grpc::ServerContext& context, absl::string_view method,
                               Roles allowed) const {
  if (tokens_ == nullptr) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  const auto it = metadata.find("authorization");
  // The refusals' message, built only for a refusal: the check runs on
  // every call.
  auto refuse = [&](grpc::StatusCode code, absl::string_view why) {
    const std::string needs = absl::StrCat(method, " needs a token of role ", allowed.ToString());
    return grpc::Status(code, code == grpc::StatusCode::PERMISSION_DENIED
                                  ? absl::StrCat(needs, why)
                                  : absl::StrCat(why, needs));
  };
  if (it == metadata.end()) {
    return refuse(grpc::StatusCode::UNAUTHENTICATED,
                  "missing \"authorization: Bearer <token>\" metadata; ");
  }
  absl::string_view value(it->second.data(), it->second.size());
  if (!absl::ConsumePrefix(&value, "Bearer ")) {
    return refuse(grpc::StatusCode::UNAUTHENTICATED, "authorization: must be \"Bearer <token>\"; ");
  }
  Role role = Role::kFetcher;
  if (!tokens_->Find(value, &role)) {
    return refuse(grpc::StatusCode::UNAUTHENTICATED, "authorization: unknown token; ");
  }
  if (!allowed.Has(role)) {
    return refuse(grpc::StatusCode::PERMISSION_DENIED,
                  absl::StrCat(", the caller's token has role ", RoleName(role)));
  }
  return grpc::Status::OK;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const ServerTlsOptions& options) {
  if (options.cert_file.empty()) {
    if (!options.key_file.empty() || !options.client_ca_file.empty()) {
      return absl::InvalidArgumentError("tls_key, tls_client_ca: need tls_cert");
    }
    return grpc::InsecureServerCredentials();
  }
  if (options.key_file.empty()) return absl::InvalidArgumentError("tls_key: needed with tls_cert");
  absl::StatusOr<std::string> cert = ReadFlagFile(options.cert_file, "tls_cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadFlagFile(options.key_file, "tls_key");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  if (!options.client_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadFlagFile(options.client_ca_file, "tls_client_ca");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    ssl.client_certificate_request =
        options.require_client_cert ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                    : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
  } else if (options.require_client_cert) {
    return absl::InvalidArgumentError("tls_require_client_cert: needs tls_client_ca");
  }
  return grpc::SslServerCredentials(ssl);
}

}  // namespace services
}  // namespace recrawl
