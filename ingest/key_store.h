// The gateway's IndexNow keys on disk: the operator-registered keys and the
// verified key files with their expiry (ingest/key_cache.h), in one file
// (ingest/key_store.proto) replaced whole and durably on every save
// (ingest/durable_file.h). The gateway saves after each change to the
// registered keys, before answering it, and when it stops; so registered
// keys survive a crash once acknowledged, and verified key files survive as
// of the last save (one lost is checked again when next submitted).
//
// Pure functions of the file and the cache; not safe for two saves of one
// path at once (the caller serialises them).
#ifndef RECRAWL_INGEST_KEY_STORE_H_
#define RECRAWL_INGEST_KEY_STORE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "ingest/key_cache.h"

namespace recrawl {
namespace ingest {

// Writes `cache`'s registered keys and the key files verified at `now` to
// `path`. OK means on disk; INTERNAL naming the path otherwise.
absl::Status SaveKeys(const std::string& path, const KeyCache& cache, absl::Time now);

// Puts the keys saved in `path` into `cache`: every registered key, and the
// verified key files not expired at `now`. A missing file holds nothing
// (OK); DATA_LOSS naming the path when it cannot be read or parsed, or
// holds a malformed key.
absl::Status LoadKeys(const std::string& path, KeyCache* cache, absl::Time now);

}  // namespace ingest
}  // namespace recrawl

#endif  // RECRAWL_INGEST_KEY_STORE_H_
