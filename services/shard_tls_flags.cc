#include "services/shard_tls_flags.h"

#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, shard_tls_ca, "", "PEM CAs of the shards' certificates (empty: plaintext)");
ABSL_FLAG(std::string, shard_tls_cert, "", "PEM client certificate toward the shards");
ABSL_FLAG(std::string, shard_tls_key, "", "Private key of --shard_tls_cert");
ABSL_FLAG(std::string, shard_tls_server_name, "",
          "Name to verify in the shards' certificates (default: the address's host)");

namespace recrawl {
namespace services {

client::ClientTlsOptions ShardTlsFromFlags() {
  client::ClientTlsOptions tls;
  tls.ca_file = absl::GetFlag(FLAGS_shard_tls_ca);
  tls.cert_file = absl::GetFlag(FLAGS_shard_tls_cert);
  tls.key_file = absl::GetFlag(FLAGS_shard_tls_key);
  tls.server_name = absl::GetFlag(FLAGS_shard_tls_server_name);
  return tls;
}

}  // namespace services
}  // namespace recrawl
