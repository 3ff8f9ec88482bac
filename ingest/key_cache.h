// IndexNow keys per host: the keys operators register, and the outcome of
// checking key files (https://<host>/<key>.txt, or a keyLocation that
// covers only its folder), cached with an expiry. URLs submitted while a
// key file is being checked are held here and handed back when it checks
// out (dropped when it does not).
//
// A key file is identified by its URL; its state is one of
//   verified  until now + verified_ttl (URLs under its scope are accepted);
//   pending   a check is in flight (started by Admit; ends by Complete, or
//             is started again after pending_timeout);
//   failed    until now + failed_ttl (answered 403), then checked again.
// A registered key covers its whole host and never expires.
//
// Registered keys and verified key files can be read out (Registered,
// Proven) and put back (Register, RestoreProven): ingest/key_store.h keeps
// them on disk across restarts.
//
// Pure logic (every call takes `now`, no I/O); thread-safe (one mutex).
#ifndef RECRAWL_INGEST_KEY_CACHE_H_
#define RECRAWL_INGEST_KEY_CACHE_H_

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace recrawl {
namespace ingest {

// The file that proves `key` for `host`.
struct KeyFile {
  // Normalised (cluster::NormalizeHost).
  std::string host;
  std::string key;
  // https://<host>/<key>.txt, or the keyLocation (normalised).
  std::string url;
  // The path prefix of the URLs the key covers: "/" or the keyLocation's
  // folder ("/news/" for https://host/news/k.txt).
  std::string scope;
};

// The key file for `host` and `key` at its default place.
KeyFile DefaultKeyFile(absl::string_view host, absl::string_view key);

// OK when `key` follows the IndexNow syntax (8 to 128 of a-z, A-Z, 0-9
// and '-'); else INVALID_ARGUMENT naming the field "key".
absl::Status ValidateIndexNowKey(absl::string_view key);

// True when a key file's content proves `key`: the content is the key,
// with surrounding whitespace (and a UTF-8 byte order mark) ignored.
bool KeyFileProves(absl::string_view content, absl::string_view key);

struct KeyCacheOptions {
  absl::Duration verified_ttl = absl::Hours(24);
  absl::Duration failed_ttl = absl::Minutes(10);
  // A check not completed within this is started again.
  absl::Duration pending_timeout = absl::Minutes(2);
  // Key files remembered (any state); past it, new key files are refused
  // (kBusy) until entries expire.
  size_t max_entries = 100000;
  // URLs held for pending checks, over all key files.
  size_t max_held_urls = 100000;
};

class KeyCache {
 public:
  enum class Admission {
    // Registered key, or a verified key file: forward the URLs.
    kGranted,
    // A check of this key file is in flight: the URLs are held.
    kPending,
    // The URLs are held and the caller must check the key file now and
    // report with Complete.
    kStartCheck,
    // The key file did not prove the key (until failed_ttl passes).
    kFailed,
    // No room for the entry or the URLs (max_entries, max_held_urls).
    kBusy,
  };
  struct RegisteredKey {
    std::string host;
    std::string key;
  };
  // A verified key file and when its verification expires.
  struct ProvenKeyFile {
    KeyFile file;
    absl::Time until;
  };

  explicit KeyCache(KeyCacheOptions options = {}) : options_(options) {}

  // Operator keys. Register: true when the key is new, false when it was
  // registered already; INVALID_ARGUMENT naming "host" or "key" when
  // either is malformed.
  absl::StatusOr<bool> Register(absl::string_view host, absl::string_view key);
  // False when the key was not registered for the host.
  bool Unregister(absl::string_view host, absl::string_view key);
  // Sorted by host, then key; those of `host` (any spelling that
  // normalises to it), or all when `host` is "".
  std::vector<RegisteredKey> Registered(absl::string_view host = "") const;

  // The key files verified and not expired at `now`, sorted by URL.
  std::vector<ProvenKeyFile> Proven(absl::Time now) const;
  // Marks `file` verified until `until` (as Complete does when it proved
  // the key) unless `until` has passed at `now`, the file is known already
  // (in any state) or the cache is full. True when it was marked.
  bool RestoreProven(const KeyFile& file, absl::Time until, absl::Time now);

  // What a submission of `urls` (all on file.host, under file.scope)
  // proven by `file` gets at `now`; see Admission for what is held.
  Admission Admit(const KeyFile& file, const std::vector<std::string>& urls, absl::Time now);

  // The end of a check Admit started: the key file proved the key or not.
  // Returns the URLs held for it when it did (to forward), none otherwise.
  std::vector<std::string> Complete(const KeyFile& file, bool proved, absl::Time now);

  // Key files with a check in flight, and URLs held for them.
  size_t pending() const;
  size_t held_urls() const;

 private:
  enum class State { kVerified, kPending, kFailed };
  struct Entry {
    KeyFile file;
    State state = State::kPending;
    // Verified/failed: when it expires; pending: when the check is stale.
    absl::Time until;
    std::vector<std::string> held;
  };
  // Drops expired verified and failed entries (not pending ones: their
  // held URLs wait for Complete or a new check).
  void Expire(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Hold(Entry* entry, const std::vector<std::string>& urls) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const KeyCacheOptions options_;
  mutable absl::Mutex mu_;
  std::set<std::pair<std::string, std::string>> registered_ ABSL_GUARDED_BY(mu_);
  // By key file URL.
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  size_t held_urls_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ingest
}  // namespace recrawl

#endif  // RECRAWL_INGEST_KEY_CACHE_H_
