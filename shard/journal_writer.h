// The write side of a shard's journal (journal_format.h): the entry being
// built, the sequence numbers, the window, and the pages whose records lack
// journaled state.
//
// Why a journal: a blind patch per signal costs RocksDB a random-key insert
// into its memtable, ~45% of a signal's cost and more than a raw put, so
// per-signal records cannot go faster than RocksDB's put rate. A request's
// signals go into one entry under a sequential key instead. A URL's record
// takes its signal state in when the URL is crawled (the report rewrites
// it anyway). Entries are dropped once no URL needs them: a URL whose
// oldest needed entry is about to leave the journal's window has its whole
// state written again at the end (a fold: a 'G' or 'F' record, 23–27 sequential
// bytes instead of a random record update), so the journal stays bounded by
// the window plus one state record per URL signalled and not crawled since.
// Start-up replays it on top of the records.
//
// Leases go the same way, for the same reason (a lease patch per URL cost
// a random-key insert each): a lease request's grants are one entry, a
// URL's record takes its lease state in at the next crawl (which ends the
// lease), a failed fetch or a release ends it with an 'E' record, and a
// URL whose lease is still known when its entry leaves the window has it
// written again ('L').
#ifndef RECRAWL_SHARD_JOURNAL_WRITER_H_
#define RECRAWL_SHARD_JOURNAL_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "shard/index/crawl_index.h"
#include "shard/journal_format.h"
#include "shard/store/url_store.h"

namespace recrawl {
namespace shard {

// The pages whose records lack journaled state, each by the oldest entry it
// needs, oldest first (the order folds go in). Entries are pushed in
// non-decreasing order (the journal's sequence only grows), so a run of
// pages per entry keeps them in 4 bytes a page instead of the 16 of a
// (sequence, page) pair: after a restart nearly every signalled URL is in
// it. Not thread-safe.
class UnfoldedPages {
 public:
  // `seq` must not be below the last one pushed.
  void Push(uint64_t seq, PageId page) {
    if (runs_.empty() || runs_.back().seq != seq) runs_.push_back({seq, 0});
    ++runs_.back().pages;
    pages_.push_back(page);
  }
  bool empty() const { return pages_.empty(); }
  size_t size() const { return pages_.size(); }
  // Only when not empty.
  uint64_t front_seq() const { return runs_.front().seq; }
  PageId front_page() const { return pages_.front(); }
  void pop_front() {
    pages_.pop_front();
    if (--runs_.front().pages == 0) runs_.pop_front();
  }

 private:
  struct Run {
    uint64_t seq;
    uint64_t pages;
  };
  std::deque<Run> runs_;
  std::deque<PageId> pages_;
};

// Builds one entry per request and writes it into the request's batch,
// folding the pages due first and dropping the entries no record needs.
// Entries are numbered from 1 up without gaps; the store keeps those from
// first_kept() to next_seq() - 1. Not thread-safe (the shard serialises its
// calls).
class JournalWriter {
 public:
  // Folds the pages whose oldest needed entry is more than `window` entries
  // before the next one.
  explicit JournalWriter(uint64_t window);

  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  // Picks up where a stored journal left off (start-up, before any entry is
  // written): the next entry's sequence number and the first one the store
  // holds. first_kept <= next_seq.
  void Restore(uint64_t next_seq, uint64_t first_kept);

  // The sequence number the current entry is written under: a record
  // written now holds the journal's state up to the entry before it.
  uint64_t next_seq() const { return next_seq_; }
  // The first entry the store holds (== next_seq() when none).
  uint64_t first_kept() const { return first_kept_; }
  uint64_t window() const { return window_; }

  // Records into the current entry: a signal as 'T' when its source is
  // known, else 'S'; a state as 'G' when its split by source is known, else
  // 'F'. A lease's holder is cut to kMaxJournalHolder bytes (shards accept
  // far less).
  void AddSignal(const JournalSignal& s);
  void AddState(const JournalState& s);
  void AddLease(const JournalLease& l);
  void AddLeaseEnd(const JournalLeaseEnd& e);
  // The records added since the last WriteEntry.
  absl::string_view entry() const { return entry_; }

  // `page`'s record lacks the journal's records about it from entry `seq`
  // on (the current entry's next_seq(), or at replay the entry read). A
  // page is added once until it is crawled or removed (the caller keeps
  // that in PageSlot::unfolded); `seq` must not be below the last one
  // added.
  void AddUnfolded(uint64_t seq, PageId page) { unfolded_.Push(seq, page); }
  const UnfoldedPages& unfolded() const { return unfolded_; }

  // Ends the current entry. First the pages whose oldest needed entry left
  // the window are folded, at most kFoldsPerCall a call (a burst of them is
  // spread out): for each page that `still_unfolded` says still lacks its
  // journaled state (not crawled or removed since), `fold` adds its whole
  // state to the entry (AddState, and AddLease if it has one), and the page
  // then needs the current entry on; pages no longer unfolded are dropped.
  // Then the entry, unless empty, goes into `batch` under next_seq(), which
  // moves on, and the entries before the oldest one still needed are
  // deleted from `batch`'s store, in steps of kTruncateStep (one range
  // deletion per step). The entry is empty afterwards.
  void WriteEntry(UrlStore::Batch* batch, absl::FunctionRef<bool(PageId)> still_unfolded,
                  absl::FunctionRef<void(PageId)> fold);

  static constexpr int kFoldsPerCall = 1024;
  static constexpr uint64_t kTruncateStep = 256;

 private:
  const uint64_t window_;
  uint64_t next_seq_ = 1;
  uint64_t first_kept_ = 1;
  // Pages with unfolded records (by their oldest entry, oldest first; a page
  // crawled since is skipped when it comes up).
  UnfoldedPages unfolded_;
  std::string entry_;
};

inline void JournalWriter::AddSignal(const JournalSignal& s) {
  using journal_internal::PutFixed;
  const bool sourced = s.source >= 0 && s.source < kTrustSources;
  entry_.push_back(sourced ? kJournalSourcedSignalTag : kJournalSignalTag);
  PutFixed(s.url, &entry_);
  PutFixed(s.time, &entry_);
  PutFixed(s.key, &entry_);
  if (sourced) PutFixed(s.source, &entry_);
}

inline void JournalWriter::AddState(const JournalState& s) {
  using journal_internal::PutFixed;
  entry_.push_back(s.split_known ? kJournalJointStateTag : kJournalStateTag);
  PutFixed(s.url, &entry_);
  PutFixed(s.n_cis, &entry_);
  PutFixed(s.filter, &entry_);
  PutFixed(s.latest, &entry_);
  if (s.split_known) {
    entry_.append(reinterpret_cast<const char*>(s.split.named.data()), s.split.named.size());
    PutFixed(s.split.joint_events, &entry_);
    PutFixed(s.split.joint_signals, &entry_);
    PutFixed(s.split.latest_sources, &entry_);
  }
}

inline void JournalWriter::AddLease(const JournalLease& l) {
  using journal_internal::PutFixed;
  const absl::string_view holder = l.holder.substr(0, kMaxJournalHolder);
  entry_.push_back(kJournalLeaseTag);
  PutFixed(l.url, &entry_);
  PutFixed(l.id, &entry_);
  PutFixed(l.deadline, &entry_);
  PutFixed(static_cast<uint16_t>(holder.size()), &entry_);
  entry_.append(holder.data(), holder.size());
}

inline void JournalWriter::AddLeaseEnd(const JournalLeaseEnd& e) {
  using journal_internal::PutFixed;
  entry_.push_back(kJournalLeaseEndTag);
  PutFixed(e.url, &entry_);
  PutFixed(e.id, &entry_);
}

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_JOURNAL_WRITER_H_
