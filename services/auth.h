// Who may call what on the recrawl servers, and their TLS.
//
// Every RPC carries a token in its `authorization` metadata
// ("Bearer <token>", client/credentials.h). The server maps the token to a
// role with its token file (cluster/tokens.h) and checks the role against
// the method's allowed roles: a missing or unknown token is
// UNAUTHENTICATED, a known token whose role may not call the method is
// PERMISSION_DENIED; both messages say which roles the method takes.
// Without a token file the check is off (local development and tests); the
// servers log that loudly at start. The standard gRPC health and
// reflection services are not checked (load balancers and Kubernetes probe
// health without tokens; reflection shows only the public schema).
//
// Tokens travel in the clear unless the channel is TLS: give the servers
// --tls_cert/--tls_key (ServerCredentialsFor) and the clients the CA
// (client::ChannelCredentialsFor).
#ifndef RECRAWL_SERVICES_AUTH_H_
#define RECRAWL_SERVICES_AUTH_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cluster/tokens.h"
#include "grpcpp/grpcpp.h"

namespace recrawl {
namespace services {

// The check a server runs at the start of every RPC.
class Authorizer {
 public:
  // Checks nothing.
  Authorizer() = default;
  explicit Authorizer(cluster::TokenTable tokens)
      : tokens_(std::make_unique<cluster::TokenTable>(std::move(tokens))) {}

  bool enabled() const { return tokens_ != nullptr; }

  // OK when `context` carries a token whose role is in `allowed`;
  // `method` names the RPC in the messages.
  grpc::Status Check(const grpc::ServerContext& context, absl::string_view method,
                     cluster::Roles allowed) const;

 private:
  std::unique_ptr<const cluster::TokenTable> tokens_;
};

struct ServerTlsOptions {
  std::string cert_file;       // PEM certificate chain; empty: no TLS
  std::string key_file;        // PEM private key
  std::string client_ca_file;  // PEM CAs for client certificates; empty: none
  bool require_client_cert = false;
};

// Insecure credentials when `options.cert_file` is empty; else TLS with the
// certificate, asking for client certificates signed by client_ca_file
// (and refusing clients without one when require_client_cert).
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const ServerTlsOptions& options);

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_AUTH_H_
