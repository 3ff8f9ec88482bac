// The security flags both servers take (--token_file, --tls_*), read into
// an Authorizer and server credentials; services/auth.h has the formats.
#ifndef RECRAWL_SERVICES_AUTH_FLAGS_H_
#define RECRAWL_SERVICES_AUTH_FLAGS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/grpcpp.h"
#include "services/auth.h"

namespace recrawl {
namespace services {

struct ServerSecurity {
  // The --tls_* flags, checked as ServerCredentialsFor checks them.
  ServerTlsOptions tls;
  Authorizer authorizer;
  // The server's own tokens (for the calls it makes to other servers).
  cluster::TokenTable tokens;
  std::shared_ptr<grpc::ServerCredentials> credentials;
};

// Reads the flags and logs what is in force; without --token_file it logs
// a warning that every caller may call every RPC. `protocol` names what the
// server serves in that log ("plaintext gRPC", "plaintext HTTP").
absl::StatusOr<ServerSecurity> ServerSecurityFromFlags(absl::string_view protocol = "gRPC");

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_AUTH_FLAGS_H_
