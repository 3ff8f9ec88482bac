#include "ingest/cdn_purge.h"

#include <google/protobuf/util/json_util.h>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cluster/url.h"
#include "ingest/gateway.pb.h"

namespace recrawl {
namespace ingest {

absl::StatusOr<std::vector<std::string>> ParseCdnPurge(absl::string_view body) {
  CdnPurgeBody parsed;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  const auto status =
      google::protobuf::util::JsonStringToMessage(std::string(body), &parsed, options);
  if (!status.ok()) return absl::InvalidArgumentError(absl::StrCat("JSON: ", status.ToString()));
  if (parsed.urls_size() == 0) return absl::InvalidArgumentError("urls: missing or empty");
  if (static_cast<size_t>(parsed.urls_size()) > kMaxPurgeUrls) {
    return absl::InvalidArgumentError(absl::StrCat(
        "urls: ", parsed.urls_size(), " URLs, more than the ", kMaxPurgeUrls, " allowed"));
  }
  std::vector<std::string> out;
  absl::flat_hash_set<std::string> seen;
  for (int i = 0; i < parsed.urls_size(); ++i) {
    absl::StatusOr<cluster::NormalizedUrl> url = cluster::NormalizeUrl(parsed.urls(i));
    if (!url.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("urls[", i, "]: ", absl::StripPrefix(url.status().message(), "url: ")));
    }
    if (seen.insert(url->spec()).second) out.push_back(url->spec());
  }
  return out;
}

}  // namespace ingest
}  // namespace recrawl
