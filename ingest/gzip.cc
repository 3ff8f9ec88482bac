#include "ingest/gzip.h"

#include <zlib.h>

#include <limits>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace ingest {

bool LooksGzipped(absl::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

absl::StatusOr<std::string> InflateGzip(absl::string_view data, size_t max_bytes) {
  if (!LooksGzipped(data)) return absl::InvalidArgumentError("body: not gzip (no 1f 8b header)");
  if (data.size() > std::numeric_limits<uInt>::max()) {
    return absl::InvalidArgumentError("body: too large to inflate in one call");
  }
  z_stream z{};
  // 16 + MAX_WBITS: gzip header and trailer only.
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError("zlib: inflateInit2 failed");
  }
  std::string out;
  char chunk[16384];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  absl::Status error;
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof(chunk);
    const int rc = inflate(&z, Z_NO_FLUSH);
    const size_t produced = sizeof(chunk) - z.avail_out;
    if (out.size() + produced > max_bytes) {
      error = absl::ResourceExhaustedError(
          absl::StrCat("body: inflates to more than ", max_bytes, " bytes"));
      break;
    }
    out.append(chunk, produced);
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      // Another gzip member follows.
      if (inflateReset(&z) != Z_OK) {
        error = absl::InternalError("zlib: inflateReset failed");
        break;
      }
      continue;
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0) {
      error = absl::InvalidArgumentError("body: gzip stream cut short");
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      error = absl::InvalidArgumentError(
          absl::StrCat("body: corrupt gzip (", z.msg != nullptr ? z.msg : "zlib error", ")"));
      break;
    }
  }
  inflateEnd(&z);
  if (!error.ok()) return error;
  return out;
}

}  // namespace ingest
}  // namespace recrawl
