// The flags of a client of the shards (the coordinator, and the ingestion
// gateway when it sends signals straight to the shards): --shard_tls_ca,
// --shard_tls_cert, --shard_tls_key and --shard_tls_server_name, read into
// the TLS options of its channels to the shards.
#ifndef RECRAWL_SERVICES_SHARD_TLS_FLAGS_H_
#define RECRAWL_SERVICES_SHARD_TLS_FLAGS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "client/credentials.h"
#include "grpcpp/grpcpp.h"

namespace recrawl {
namespace services {

// The channels' TLS options as given (ca_file empty: plaintext; a
// certificate and key make the client present them, as shards started with
// --tls_require_client_cert ask) and the credentials made from them.
struct ShardTls {
  client::ClientTlsOptions options;
  std::shared_ptr<grpc::ChannelCredentials> credentials;
};

// InvalidArgument / NotFound naming the --shard_tls_* flag whose file
// cannot be used (client::ChannelCredentialsFor's message, prefixed).
absl::StatusOr<ShardTls> ShardTlsFromFlags();

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_SHARD_TLS_FLAGS_H_
