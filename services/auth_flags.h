// The security flags both servers take (--token_file, --tls_*), read into
// an Authorizer and server credentials; services/auth.h has the formats.
#ifndef RECRAWL_SERVICES_AUTH_FLAGS_H_
#define RECRAWL_SERVICES_AUTH_FLAGS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "services/auth.h"

namespace recrawl {
namespace services {

struct ServerSecurity {
  Authorizer authorizer;
  // The server's own tokens (for the calls it makes to other servers).
  cluster::TokenTable tokens;
  std::shared_ptr<grpc::ServerCredentials> credentials;
};

// Reads the flags and logs what is in force; without --token_file it logs
// a warning that every caller may call every RPC.
absl::StatusOr<ServerSecurity> ServerSecurityFromFlags();

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_AUTH_FLAGS_H_
