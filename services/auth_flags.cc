#include "services/auth_flags.h"

#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "cluster/tokens.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, token_file, "",
          "Role tokens, lines \"<role> <token>\" (roles: fetcher, pinger, operator, "
          "internal); every RPC must carry \"authorization: Bearer <token>\" of a role "
          "allowed for it. Empty: no checks (development only)");
ABSL_FLAG(std::string, tls_cert, "", "PEM server certificate chain (empty: plaintext)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CAs that sign client certificates (asked for when given)");
ABSL_FLAG(bool, tls_require_client_cert, false,
          "Refuse clients without a certificate signed by --tls_client_ca");

namespace recrawl {
namespace services {

absl::StatusOr<ServerSecurity> ServerSecurityFromFlags(absl::string_view protocol) {
  ServerSecurity security;
  ServerTlsOptions& tls = security.tls;
  tls.cert_file = absl::GetFlag(FLAGS_tls_cert);
  tls.key_file = absl::GetFlag(FLAGS_tls_key);
  tls.client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  tls.require_client_cert = absl::GetFlag(FLAGS_tls_require_client_cert);
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = ServerCredentialsFor(tls);
  if (!credentials.ok()) return credentials.status();
  security.credentials = *std::move(credentials);

  if (const std::string path = absl::GetFlag(FLAGS_token_file); !path.empty()) {
    absl::StatusOr<cluster::TokenTable> tokens = cluster::TokenTable::Load(path);
    if (!tokens.ok()) return tokens.status();
    security.tokens = *tokens;
    security.authorizer = Authorizer(*std::move(tokens));
    spdlog::info("role tokens from {}: {} tokens", path, security.tokens.size());
  } else {
    spdlog::warn(
        "NO --token_file: authentication is OFF, any caller may call anything "
        "(development only)");
  }
  if (tls.cert_file.empty()) {
    spdlog::warn("no --tls_cert: plaintext {}{}", std::string(protocol),
                 security.authorizer.enabled() ? " (tokens travel in the clear)" : "");
  } else {
    spdlog::info("{} over TLS with {}{}", std::string(protocol), tls.cert_file,
                 tls.client_ca_file.empty()
                     ? ""
                     : (tls.require_client_cert ? ", client certificates required"
                                                : ", client certificates verified when given"));
  }
  return security;
}

}  // namespace services
}  // namespace recrawl
