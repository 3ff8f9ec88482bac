// The read side of a shard's journal (journal_format.h): its entries from
// the store in sequence order, and the records of an entry.
#ifndef RECRAWL_SHARD_JOURNAL_READER_H_
#define RECRAWL_SHARD_JOURNAL_READER_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cluster/url_id.h"
#include "shard/journal_format.h"
#include "shard/store/url_store.h"

namespace recrawl {
namespace shard {

// What each kind of record of an entry is handed to.
struct JournalVisitor {
  absl::FunctionRef<void(const JournalSignal&)> signal;
  absl::FunctionRef<void(const JournalState&)> state;
  absl::FunctionRef<void(const JournalLease&)> lease;
  absl::FunctionRef<void(const JournalLeaseEnd&)> lease_end;
};

// Reads a store's journal once (start-up). Not thread-safe; the store must
// outlive the reader.
class JournalReader {
 public:
  explicit JournalReader(const UrlStore* store);

  JournalReader(const JournalReader&) = delete;
  JournalReader& operator=(const JournalReader&) = delete;

  // Calls `fn` for every entry of the journal, in sequence order; returns
  // how many. Fails as UrlStore::ScanJournal does (an I/O or checksum
  // error), with `fn` called for the entries before the failure.
  absl::StatusOr<int64_t> ReadAll(
      absl::FunctionRef<void(uint64_t seq, absl::string_view entry)> fn);

  // After ReadAll: whether it found no entry, and the sequence numbers of
  // the first and the last it found (0 when none).
  bool empty() const { return !found_; }
  uint64_t first_seq() const { return first_seq_; }
  uint64_t last_seq() const { return last_seq_; }

  // Calls the visitor for each record of `entry`, in order; false (after
  // the whole records before it) at a record that is cut short or has an
  // unknown tag.
  static bool ForEachRecord(absl::string_view entry, const JournalVisitor& visit);
  // Calls `visit` with the URL of each record of `entry`, in order (look-
  // ahead passes over an entry before its records are applied); false as
  // ForEachRecord.
  static bool ForEachUrl(absl::string_view entry, absl::FunctionRef<void(cluster::UrlId)> visit);

 private:
  const UrlStore* const store_;
  bool found_ = false;
  uint64_t first_seq_ = 0;
  uint64_t last_seq_ = 0;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_JOURNAL_READER_H_
