// Bounded gzip inflation (zlib) for fetched bodies such as .xml.gz sitemaps:
// a small compressed body may inflate to gigabytes (a "gzip bomb"), so the
// output is capped.
#ifndef RECRAWL_INGEST_GZIP_H_
#define RECRAWL_INGEST_GZIP_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace recrawl {
namespace ingest {

// True when `data` starts with the gzip magic bytes (1f 8b).
bool LooksGzipped(absl::string_view data);

// The inflated content of the gzip stream `data` (concatenated members are
// inflated one after the other). RESOURCE_EXHAUSTED as soon as the output
// would pass `max_bytes`; INVALID_ARGUMENT when `data` is not gzip, is
// corrupt or is cut short. Thread-safe.
absl::StatusOr<std::string> InflateGzip(absl::string_view data, size_t max_bytes);

}  // namespace ingest
}  // namespace recrawl

#endif  // RECRAWL_INGEST_GZIP_H_
