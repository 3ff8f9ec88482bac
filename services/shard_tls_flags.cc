#include "services/shard_tls_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"

ABSL_FLAG(std::string, shard_tls_ca, "", "PEM CAs of the shards' certificates (empty: plaintext)");
ABSL_FLAG(std::string, shard_tls_cert, "", "PEM client certificate toward the shards");
ABSL_FLAG(std::string, shard_tls_key, "", "Private key of --shard_tls_cert");
ABSL_FLAG(std::string, shard_tls_server_name, "",
          "Name to verify in the shards' certificates (default: the address's host)");

namespace recrawl {
namespace services {

absl::StatusOr<ShardTls> ShardTlsFromFlags() {
  ShardTls tls;
  tls.options.ca_file = absl::GetFlag(FLAGS_shard_tls_ca);
  tls.options.cert_file = absl::GetFlag(FLAGS_shard_tls_cert);
  tls.options.key_file = absl::GetFlag(FLAGS_shard_tls_key);
  tls.options.server_name = absl::GetFlag(FLAGS_shard_tls_server_name);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      client::ChannelCredentialsFor(tls.options);
  if (!credentials.ok()) {
    return absl::Status(credentials.status().code(),
                        absl::StrCat("shard_", credentials.status().message()));
  }
  tls.credentials = *std::move(credentials);
  return tls;
}

}  // namespace services
}  // namespace recrawl
