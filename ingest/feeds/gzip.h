// Bounded gzip inflation (zlib) of fetched bodies such as .xml.gz sitemaps.
// A few kilobytes of gzip can inflate to gigabytes (a "gzip bomb"), so the
// output is capped and inflation stops as soon as it would pass the cap:
// memory stays within the cap plus one 16 KiB chunk.
//
// Pure functions; thread-safe.
#ifndef RECRAWL_INGEST_FEEDS_GZIP_H_
#define RECRAWL_INGEST_FEEDS_GZIP_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace recrawl {
namespace feeds {

// True when `data` starts with the gzip magic bytes 1f 8b (RFC 1952).
bool LooksGzipped(absl::string_view data);

// The inflated content of the gzip stream `data`; concatenated members
// (RFC 1952 Sec. 2.2) are inflated one after the other. Errors:
//   RESOURCE_EXHAUSTED  the output would pass `max_bytes`;
//   INVALID_ARGUMENT    `data` is not gzip, is corrupt, is cut short or
//                       has bytes after the last member that are not gzip.
absl::StatusOr<std::string> InflateGzip(absl::string_view data, size_t max_bytes);

// `data` inflated when it looks gzipped (InflateGzip), else `data` itself,
// which then must be at most `max_bytes` long (RESOURCE_EXHAUSTED
// otherwise). Sitemaps arrive either way, whatever their Content-Type.
absl::StatusOr<std::string> MaybeInflateGzip(absl::string_view data, size_t max_bytes);

// `data` deflated as one gzip member (zlib's default level). The gateway
// only inflates; this makes gzip bodies for tests, fixtures and benchmarks.
// Empty only if zlib cannot allocate its state.
std::string DeflateGzip(absl::string_view data);

}  // namespace feeds
}  // namespace recrawl

#endif  // RECRAWL_INGEST_FEEDS_GZIP_H_
