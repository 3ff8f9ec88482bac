// The entries of a shard's signal journal. An entry is a sequence of
// records in host byte order (little-endian on the x86-64 and arm64
// machines recrawl builds for):
//   'S' url(8) time(8) key(8)                    a counted signal
//   'F' url(8) n_cis(2) filter(8) latest(4)      a URL's whole signal state
//                                                since its last crawl
//   'L' url(8) id(8) deadline(8) holder_size(2) holder
//                                                a lease granted
//   'E' url(8) id(8)                             a lease ended by a failed
//                                                fetch
//
// Why a journal: a blind patch per signal costs RocksDB a random-key insert
// into its memtable, ~45% of a signal's cost and more than a raw put, so
// per-signal records cannot go faster than RocksDB's put rate. A batch's
// signals go into one entry under a sequential key instead. A URL's record
// takes its signal state in when the URL is crawled (the report rewrites
// it anyway). Entries are dropped once no URL needs them: a URL whose
// oldest needed entry is about to leave the journal's window has its whole
// state written again at the end (an 'F' record, 23 sequential bytes
// instead of a random record update), so the journal stays bounded by the
// window plus one state record per URL signalled and not crawled since.
// Start-up replays it on top of the records.
//
// Leases go the same way, for the same reason (a lease patch per URL cost
// a random-key insert each): a lease batch's grants are one entry, a URL's
// record takes its lease state in at the next crawl (which ends the lease),
// a failed fetch ends it with an 'E' record, and a URL whose lease is still
// known when its entry leaves the window has it written again ('L').
#ifndef RECRAWL_SHARD_SIGNAL_JOURNAL_H_
#define RECRAWL_SHARD_SIGNAL_JOURNAL_H_

#include <cstdint>
#include <cstring>
#include <deque>
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

struct JournalState {
  UrlId url;
  uint16_t n_cis;
  uint64_t filter;
  float latest;
};

struct JournalLease {
  UrlId url;
  uint64_t id;
  double deadline;
  absl::string_view holder;  // at most kMaxJournalHolder bytes
};

struct JournalLeaseEnd {
  UrlId url;
  uint64_t id;
};

namespace internal {
template <typename T>
void Put(const T& v, std::string* out) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}
template <typename T>
T Get(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
}  // namespace internal

inline constexpr size_t kJournalSignalBytes = 25;
inline constexpr size_t kJournalStateBytes = 23;
inline constexpr size_t kJournalLeaseBytes = 27;  // without the holder
inline constexpr size_t kJournalLeaseEndBytes = 17;
inline constexpr size_t kMaxJournalHolder = 0xffff;

inline void AppendJournalSignal(const JournalSignal& s, std::string* entry) {
  entry->push_back('S');
  internal::Put(s.url, entry);
  internal::Put(s.time, entry);
  internal::Put(s.key, entry);
}

inline void AppendJournalState(const JournalState& s, std::string* entry) {
  entry->push_back('F');
  internal::Put(s.url, entry);
  internal::Put(s.n_cis, entry);
  internal::Put(s.filter, entry);
  internal::Put(s.latest, entry);
}

// The holder is cut to kMaxJournalHolder bytes (shards accept far less).
inline void AppendJournalLease(const JournalLease& l, std::string* entry) {
  const absl::string_view holder = l.holder.substr(0, kMaxJournalHolder);
  entry->push_back('L');
  internal::Put(l.url, entry);
  internal::Put(l.id, entry);
  internal::Put(l.deadline, entry);
  internal::Put(static_cast<uint16_t>(holder.size()), entry);
  entry->append(holder.data(), holder.size());
}

inline void AppendJournalLeaseEnd(const JournalLeaseEnd& e,
                                  std::string* entry) {
  entry->push_back('E');
  internal::Put(e.url, entry);
  internal::Put(e.id, entry);
}

// What each kind of record of an entry is handed to.
struct JournalVisitor {
  absl::FunctionRef<void(const JournalSignal&)> signal;
  absl::FunctionRef<void(const JournalState&)> state;
  absl::FunctionRef<void(const JournalLease&)> lease;
  absl::FunctionRef<void(const JournalLeaseEnd&)> lease_end;
};

// Calls the visitor for each record of `entry`, in order; false (after the
// whole records before it) at a record that is cut short or has an unknown
// tag.
inline bool ForEachJournalRecord(absl::string_view entry,
                                 const JournalVisitor& visit) {
  using internal::Get;
  size_t i = 0;
  while (i < entry.size()) {
    const char* p = entry.data() + i;
    const size_t left = entry.size() - i;
    if (p[0] == 'S' && left >= kJournalSignalBytes) {
      visit.signal(
          {Get<UrlId>(p + 1), Get<double>(p + 9), Get<uint64_t>(p + 17)});
      i += kJournalSignalBytes;
    } else if (p[0] == 'F' && left >= kJournalStateBytes) {
      visit.state({Get<UrlId>(p + 1), Get<uint16_t>(p + 9),
                   Get<uint64_t>(p + 11), Get<float>(p + 19)});
      i += kJournalStateBytes;
    } else if (p[0] == 'L' && left >= kJournalLeaseBytes &&
               left - kJournalLeaseBytes >= Get<uint16_t>(p + 25)) {
      const uint16_t holder = Get<uint16_t>(p + 25);
      visit.lease({Get<UrlId>(p + 1), Get<uint64_t>(p + 9),
                   Get<double>(p + 17),
                   absl::string_view(p + kJournalLeaseBytes, holder)});
      i += kJournalLeaseBytes + holder;
    } else if (p[0] == 'E' && left >= kJournalLeaseEndBytes) {
      visit.lease_end({Get<UrlId>(p + 1), Get<uint64_t>(p + 9)});
      i += kJournalLeaseEndBytes;
    } else {
      return false;
    }
  }
  return true;
}

// Calls `visit` with the URL of each record of `entry`, in order (the
// start-up replay's look-ahead passes); false as ForEachJournalRecord.
inline bool ForEachJournalUrl(absl::string_view entry,
                              absl::FunctionRef<void(UrlId)> visit) {
  return ForEachJournalRecord(
      entry, {[&](const JournalSignal& s) { visit(s.url); },
              [&](const JournalState& s) { visit(s.url); },
              [&](const JournalLease& l) { visit(l.url); },
              [&](const JournalLeaseEnd& e) { visit(e.url); }});
}

// The pages with journaled signals their records lack, each by the oldest
// entry it needs, oldest first (the order folds go in). Entries are pushed
// in non-decreasing order (the journal's sequence only grows), so a run of
// pages per entry keeps them in 4 bytes a page instead of the 16 of a
// (sequence, page) pair: after a restart nearly every signalled URL is in
// it.
class UnfoldedPages {
 public:
  // `seq` must not be below the last one pushed.
  void Push(uint64_t seq, uint32_t page) {
    if (runs_.empty() || runs_.back().seq != seq) runs_.push_back({seq, 0});
    ++runs_.back().pages;
    pages_.push_back(page);
  }
  bool empty() const { return pages_.empty(); }
  size_t size() const { return pages_.size(); }
  uint64_t front_seq() const { return runs_.front().seq; }
  uint32_t front_page() const { return pages_.front(); }
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
  std::deque<uint32_t> pages_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_SIGNAL_JOURNAL_H_
