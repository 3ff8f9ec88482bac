// The entries of a shard's signal journal: the signals one batch counted,
// 24 bytes each (URL id, time, duplicate key) in host byte order
// (little-endian on the x86-64 and arm64 machines recrawl builds for).
//
// Why a journal: a blind patch per signal costs RocksDB a random-key insert
// into its memtable, ~45% of a signal's cost and more than a raw put, so
// per-signal records cannot go faster than RocksDB's put rate. A batch's
// signals go into one entry under a sequential key instead; a URL's record
// is brought up to date only when the URL is crawled (the report rewrites
// its signal state anyway) or when its entries are about to leave the
// journal's window (a fold), and start-up replays the window.
#ifndef RECRAWL_SHARD_SIGNAL_JOURNAL_H_
#define RECRAWL_SHARD_SIGNAL_JOURNAL_H_

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "shard/url_id.h"

namespace recrawl {
namespace shard {

struct JournalSignal {
  UrlId url;
  double time;
  uint64_t key;
};

inline constexpr size_t kJournalSignalBytes = 24;

inline void AppendJournalSignal(const JournalSignal& s, std::string* entry) {
  char bytes[kJournalSignalBytes];
  std::memcpy(bytes, &s.url, 8);
  std::memcpy(bytes + 8, &s.time, 8);
  std::memcpy(bytes + 16, &s.key, 8);
  entry->append(bytes, sizeof(bytes));
}

// Calls `fn` for each signal of `entry`; false (after the whole signals) if
// its length is not a multiple of the signal size.
inline bool ForEachJournalSignal(
    absl::string_view entry, absl::FunctionRef<void(const JournalSignal&)> fn) {
  static_assert(sizeof(JournalSignal) == kJournalSignalBytes, "layout");
  size_t i = 0;
  for (; i + kJournalSignalBytes <= entry.size(); i += kJournalSignalBytes) {
    JournalSignal s;
    std::memcpy(&s.url, entry.data() + i, 8);
    std::memcpy(&s.time, entry.data() + i + 8, 8);
    std::memcpy(&s.key, entry.data() + i + 16, 8);
    fn(s);
  }
  return i == entry.size();
}

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_SIGNAL_JOURNAL_H_
