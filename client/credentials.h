// The client half of the servers' security (services/auth.h): a call's
// token, a client's token from a token file, and channel credentials (TLS).
// Used by every client of the servers, the coordinator toward its shards
// included. Thread-safe.
#ifndef RECRAWL_CLIENT_CREDENTIALS_H_
#define RECRAWL_CLIENT_CREDENTIALS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "cluster/tokens.h"
#include "grpcpp/grpcpp.h"

namespace recrawl {
namespace client {

// Adds "authorization: Bearer <token>" to a call (no-op for "").
void AttachToken(grpc::ClientContext* context, const std::string& token);

// The token a client of role `role` reads from `path`: the file is either
// a token file as above (the line of `role`, the first if several) or a
// single token. INVALID_ARGUMENT / NOT_FOUND name the file and the line,
// never a token's text.
absl::StatusOr<std::string> ClientTokenFromFile(const std::string& path, cluster::Role role);

struct ClientTlsOptions {
  std::string ca_file;    // PEM CAs to verify the server; empty: no TLS
  std::string cert_file;  // optional client certificate chain (PEM)
  std::string key_file;   // its private key
  // Name to verify in the server certificate instead of the address's host
  // (e.g. when connecting to an IP).
  std::string server_name;
};

// Insecure credentials when `options.ca_file` is empty; else TLS.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const ClientTlsOptions& options);

// A channel to `address` with the credentials (and server name override),
// `args` and a 64 MiB receive limit (the servers' batches).
std::shared_ptr<grpc::Channel> CreateChannelFor(
    const std::string& address, const std::shared_ptr<grpc::ChannelCredentials>& credentials,
    const ClientTlsOptions& options, grpc::ChannelArguments args = {});

}  // namespace client
}  // namespace recrawl

#endif  // RECRAWL_CLIENT_CREDENTIALS_H_
