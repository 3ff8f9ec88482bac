// Who may call what: role tokens and TLS for the recrawl servers.
//
// Every RPC carries a token in its `authorization` metadata
// ("Bearer <token>"). The server maps the token to a role with its token
// file and checks the role against the method's allowed roles: a missing or
// unknown token is UNAUTHENTICATED, a known token whose role may not call
// the method is PERMISSION_DENIED; both messages say which roles the method
// takes. Without a token file the check is off (local development and
// tests); the servers log that loudly at start.
//
// Token file (--token_file), one token per line:
//
//   # comment
//   <role> <token>
//
// role is fetcher, pinger, operator or internal; a token is 16 to 256
// printable characters without spaces; a role may have several tokens
// (rotation), a token belongs to one role. The standard gRPC health and
// reflection services are not checked (load balancers and Kubernetes probe
// health without tokens; reflection shows only the public schema).
//
// Tokens travel in the clear unless the channel is TLS: give the servers
// --tls_cert/--tls_key (ServerCredentialsFromFlags) and the clients the CA
// (ChannelCredentialsFor).
#ifndef RECRAWL_SERVICES_AUTH_H_
#define RECRAWL_SERVICES_AUTH_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/grpcpp.h"

namespace recrawl {
namespace services {

enum class Role : uint8_t { kFetcher = 0, kPinger = 1, kOperator = 2, kInternal = 3 };

// A set of roles, as a bit mask.
class Roles {
 public:
  constexpr Roles() = default;
  constexpr Roles(std::initializer_list<Role> roles) {
    for (Role r : roles) bits_ |= Bit(r);
  }
  static constexpr Roles All() {
    return {Role::kFetcher, Role::kPinger, Role::kOperator, Role::kInternal};
  }
  constexpr bool Has(Role role) const { return (bits_ & Bit(role)) != 0; }
  // "fetcher, operator or internal".
  std::string ToString() const;

 private:
  static constexpr uint8_t Bit(Role r) { return uint8_t{1} << static_cast<int>(r); }
  uint8_t bits_ = 0;
};

absl::string_view RoleName(Role role);
absl::StatusOr<Role> ParseRole(absl::string_view name);

// Token → role.
class TokenTable {
 public:
  // Parses the token file's text (format above). INVALID_ARGUMENT names the
  // line.
  static absl::StatusOr<TokenTable> Parse(absl::string_view text);
  static absl::StatusOr<TokenTable> Load(const std::string& path);

  // Sets *role and returns true when `token` is known. Compares every
  // stored token in full, so the time taken does not say how much matched.
  bool Find(absl::string_view token, Role* role) const;
  // The first token of `role`, "" when it has none (a server's own token
  // toward the servers it calls).
  std::string TokenOf(Role role) const;
  size_t size() const { return tokens_.size(); }

 private:
  std::vector<std::pair<std::string, Role>> tokens_;
};

// The check a server runs at the start of every RPC.
class Authorizer {
 public:
  // Checks nothing.
  Authorizer() = default;
  explicit Authorizer(TokenTable tokens)
      : tokens_(std::make_unique<TokenTable>(std::move(tokens))) {}

  bool enabled() const { return tokens_ != nullptr; }

  // OK when `context` carries a token whose role is in `allowed`;
  // `method` names the RPC in the messages.
  grpc::Status Check(const grpc::ServerContext& context, absl::string_view method,
                     Roles allowed) const;

 private:
  std::unique_ptr<const TokenTable> tokens_;
};

// Adds "authorization: Bearer <token>" to a call (no-op for "").
void AttachToken(grpc::ClientContext* context, const std::string& token);

// OK when `token` is usable: 16 to 256 characters, each printable ASCII
// other than space. The message says what is wrong without showing the
// token.
absl::Status ValidateToken(absl::string_view token);

// The token a client of role `role` reads from `path`: the file is either
// a token file as above (the line of `role`, the first if several) or a
// single token. INVALID_ARGUMENT / NOT_FOUND name the file and the line,
// never a token's text.
absl::StatusOr<std::string> ClientTokenFromFile(const std::string& path,
                                                Role role);

// --- TLS

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

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_AUTH_H_
