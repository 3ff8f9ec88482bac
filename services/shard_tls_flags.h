// The flags of a client of the shards (the coordinator, and the ingestion
// gateway when it sends signals straight to the shards): --shard_tls_ca,
// --shard_tls_cert, --shard_tls_key and --shard_tls_server_name, read into
// the TLS options of its channels to the shards.
#ifndef RECRAWL_SERVICES_SHARD_TLS_FLAGS_H_
#define RECRAWL_SERVICES_SHARD_TLS_FLAGS_H_

#include "client/credentials.h"

namespace recrawl {
namespace services {

// The options as given: ca_file empty means plaintext channels, a
// certificate and key make the client present them (shards started with
// --tls_require_client_cert ask for one). Whether the files can be read is
// client::ChannelCredentialsFor's to say.
client::ClientTlsOptions ShardTlsFromFlags();

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_SHARD_TLS_FLAGS_H_
