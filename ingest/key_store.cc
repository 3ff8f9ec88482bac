#include "ingest/key_store.h"

#include "absl/strings/str_cat.h"
#include "ingest/durable_file.h"
#include "ingest/key_store.pb.h"

namespace recrawl {
namespace ingest {

absl::Status SaveKeys(const std::string& path, const KeyCache& cache, absl::Time now) {
  KeyStoreFile file;
  for (const KeyCache::RegisteredKey& k : cache.Registered()) {
    StoredRegisteredKey* out = file.add_registered();
    out->set_host(k.host);
    out->set_key(k.key);
  }
  for (const KeyCache::ProvenKeyFile& p : cache.Proven(now)) {
    StoredProvenKeyFile* out = file.add_proven();
    out->set_host(p.file.host);
    out->set_key(p.file.key);
    out->set_url(p.file.url);
    out->set_scope(p.file.scope);
    out->set_until_unix_micros(absl::ToUnixMicros(p.until));
  }
  std::string bytes;
  if (!file.SerializeToString(&bytes)) {
    return absl::InternalError(absl::StrCat("cannot encode the keys for ", path));
  }
  return ReplaceFileDurably(path, bytes);
}

absl::Status LoadKeys(const std::string& path, KeyCache* cache, absl::Time now) {
  absl::StatusOr<std::optional<std::string>> bytes = ReadFileIfPresent(path);
  if (!bytes.ok()) return bytes.status();
  if (!bytes->has_value()) return absl::OkStatus();
  KeyStoreFile file;
  if (!file.ParseFromString(**bytes)) {
    return absl::DataLossError(absl::StrCat(path, ": not a saved key file"));
  }
  for (const StoredRegisteredKey& k : file.registered()) {
    const absl::StatusOr<bool> added = cache->Register(k.host(), k.key());
    if (!added.ok()) {
      return absl::DataLossError(absl::StrCat(path, ": ", added.status().message()));
    }
  }
  for (const StoredProvenKeyFile& p : file.proven()) {
    cache->RestoreProven(KeyFile{p.host(), p.key(), p.url(), p.scope()},
                         absl::FromUnixMicros(p.until_unix_micros()), now);
  }
  return absl::OkStatus();
}

}  // namespace ingest
}  // namespace recrawl
