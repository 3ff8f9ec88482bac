// A CDN purge / invalidation webhook's body, {"urls": ["https://...", ...]},
// parsed and validated without I/O.
#ifndef RECRAWL_INGEST_CDN_PURGE_H_
#define RECRAWL_INGEST_CDN_PURGE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace recrawl {
namespace ingest {

// The most URLs one purge request may carry.
inline constexpr size_t kMaxPurgeUrls = 10000;

// The purged URLs, normalised (cluster/url.h), each once in first-seen
// order. INVALID_ARGUMENT naming the field ("JSON", "urls", "urls[3]") when
// the body is not such an object, the list is empty or longer than
// kMaxPurgeUrls, or a URL is not an absolute http(s) URL.
absl::StatusOr<std::vector<std::string>> ParseCdnPurge(absl::string_view body);

}  // namespace ingest
}  // namespace recrawl

#endif  // RECRAWL_INGEST_CDN_PURGE_H_
