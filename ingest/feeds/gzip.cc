#include "ingest/feeds/gzip.h"

#include <zlib.h>

#include <limits>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace feeds {

bool LooksGzipped(absl::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

namespace {

// Owns a z_stream set up for gzip; inflateEnd on destruction.
class GzipInflater {
 public:
  GzipInflater() = default;
  GzipInflater(const GzipInflater&) = delete;
  GzipInflater& operator=(const GzipInflater&) = delete;
  ~GzipInflater() {
    if (initialised_) inflateEnd(&stream_);
  }

  absl::Status Init() {
    // 16 + MAX_WBITS: a gzip header and trailer, not zlib's or raw deflate.
    if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) {
      return absl::InternalError("zlib: inflateInit2 failed");
    }
    initialised_ = true;
    return absl::OkStatus();
  }

  z_stream* stream() { return &stream_; }

 private:
  z_stream stream_{};
  bool initialised_ = false;
};

}  // namespace

absl::StatusOr<std::string> InflateGzip(absl::string_view data, size_t max_bytes) {
  if (!LooksGzipped(data)) {
    return absl::InvalidArgumentError("body: not gzip (does not start with 1f 8b)");
  }
  if (data.size() > std::numeric_limits<uInt>::max()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("body: ", data.size(), " bytes of gzip, more than zlib takes at once"));
  }
  GzipInflater inflater;
  if (absl::Status s = inflater.Init(); !s.ok()) return s;
  z_stream* z = inflater.stream();
  z->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z->avail_in = static_cast<uInt>(data.size());

  std::string out;
  char chunk[16384];
  while (true) {
    z->next_out = reinterpret_cast<Bytef*>(chunk);
    z->avail_out = sizeof(chunk);
    const int rc = inflate(z, Z_NO_FLUSH);
    const size_t produced = sizeof(chunk) - z->avail_out;
    if (produced > max_bytes - out.size()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("body: gzip inflates to more than ", max_bytes, " bytes"));
    }
    out.append(chunk, produced);
    if (rc == Z_STREAM_END) {
      if (z->avail_in == 0) return out;
      // Another member follows; anything else after a member is corrupt.
      if (!LooksGzipped(
              absl::string_view(reinterpret_cast<const char*>(z->next_in), z->avail_in))) {
        return absl::InvalidArgumentError(
            absl::StrCat("body: ", z->avail_in, " bytes after the gzip stream are not gzip"));
      }
      if (inflateReset(z) != Z_OK) return absl::InternalError("zlib: inflateReset failed");
      continue;
    }
    if (rc == Z_OK) continue;
    // Z_BUF_ERROR: no progress possible, i.e. the input ended mid-stream.
    if (rc == Z_BUF_ERROR && z->avail_in == 0) {
      return absl::InvalidArgumentError("body: gzip stream cut short");
    }
    return absl::InvalidArgumentError(
        absl::StrCat("body: corrupt gzip (", z->msg != nullptr ? z->msg : "zlib error", ")"));
  }
}

absl::StatusOr<std::string> MaybeInflateGzip(absl::string_view data, size_t max_bytes) {
  if (LooksGzipped(data)) return InflateGzip(data, max_bytes);
  if (data.size() > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("body: ", data.size(), " bytes, more than ", max_bytes));
  }
  return std::string(data);
}

std::string DeflateGzip(absl::string_view data) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return std::string();
  }
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&z, Z_FINISH);  // the bound holds all of it
  out.resize(status == Z_STREAM_END ? z.total_out : 0);
  deflateEnd(&z);
  return out;
}

}  // namespace feeds
}  // namespace recrawl
