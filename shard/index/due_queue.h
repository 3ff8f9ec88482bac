// The scheduling index's queue of due times: each queued page under a lower
// bound on when its value may reach the level Λ, popped once that time has
// come (scheduling_index.h).
//
// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, J. ACM 37(2), 1990) over
// the keys' order-preserving 64-bit patterns. With `last` the key of the
// last bucket split, bucket b > 0 holds the keys whose highest bit differing
// from last's is bit b − 1, and bucket 0 the keys equal to last; so every
// key in bucket b is below every key in bucket b + 1. A push appends to its
// bucket. A pop takes from bucket 0, and when that is empty first splits the
// lowest non-empty bucket: its minimum becomes `last`, and its entries move
// to lower buckets. An entry moves down a few times in its life, each time
// a sequential read and an append at a bucket's end, which stays in cache,
// where a d-ary heap costs a pop log_d m levels of scattered reads (the
// index queues one entry a page), the costliest part of waking a page at
// 10^6 pages and more.
//
// Keys below `last` (a bound a signal moved before the last split, or a
// clock that went back) wait in a small binary heap: they are below every
// bucketed key, so they pop first.
//
// Entries live in chunks of kChunk, linked per bucket, taken from one slab
// on 2 MiB pages and reused through a free list: the queue holds about 16
// bytes an entry however its entries spread over the buckets.
#ifndef RECRAWL_SHARD_INDEX_DUE_QUEUE_H_
#define RECRAWL_SHARD_INDEX_DUE_QUEUE_H_

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "shard/index/crawl_index.h"
#include "shard/index/huge_page_allocator.h"

namespace recrawl {
namespace shard {

class DueQueue {
 public:
  struct Entry {
    double key;
    PageId page;
    uint32_t stamp;  // the owner's, for deleting lazily
  };

  DueQueue();
  DueQueue(const DueQueue&) = delete;
  DueQueue& operator=(const DueQueue&) = delete;

  // Work done moving entries, for tests that bound it: a split moves each
  // entry of the bucket it empties, a Rewrite each entry it keeps, and the
  // slab's growth copies every entry in it. Each entry is split at most 64
  // times in its life (its bucket falls each time); growth by a fixed share
  // copies each entry a bounded number of times in all (kGrowthDivisor).
  struct Work {
    uint64_t split_moves = 0;
    uint64_t rewrite_moves = 0;
    uint64_t growth_copies = 0;
  };

  // Entries held, whatever the owner thinks of them.
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // True when the room left (free chunks and the slab's unused capacity)
  // is less than a split may take beyond the chunks it frees, so that the
  // next push or pop may grow the slab: the owner may drop stale entries
  // first (Rewrite) rather than let it grow.
  bool full() const {
    return free_chunks_ + (slab_.capacity() - slab_.size()) / kChunk < kSplitChunks;
  }
  // Makes room for `entries` entries up front. Optional: the slab grows on
  // its own by a 1/kGrowthDivisor share when a push or split finds it full.
  void Reserve(size_t entries);
  size_t MemoryBytes() const;
  const Work& work() const { return work_; }

  void Push(const Entry& e);
  // Removes the entry with the smallest key into *e if that key is <= t
  // (ties: any of them); false, changing nothing, otherwise.
  bool PopDue(double t, Entry* e);
  // The entry PopDue would give next, when that is known without work (for
  // prefetching what its page needs); nullptr otherwise.
  const Entry* Next() const;
  // Calls update(&entry) once for every entry. It may change the key;
  // returning false drops the entry.
  template <typename Update>
  void Rewrite(Update update);
  void Clear();

 private:
  static constexpr uint32_t kChunk = 64;
  static constexpr int kBuckets = 65;
  // A full slab grows by this share of itself: the copies of all growths
  // sum to at most kGrowthDivisor times the slab's final size (a geometric
  // series), and at most that share of the slab is unused after a growth.
  static constexpr size_t kGrowthDivisor = 8;
  // Chunks a Reserve adds beyond the entries asked for: some buckets' first
  // chunks are part full (keys near each other leave some 15 buckets in
  // use, most with room).
  static constexpr uint32_t kSlackChunks = 16;
  // The most chunks a split takes beyond those it frees: a new first chunk
  // for each bucket below the one split, and the chunk being read.
  static constexpr size_t kSplitChunks = kBuckets;
  static constexpr uint32_t kNoChunk = ~uint32_t{0};
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  // The key's bits, ordered as the keys are (no NaN keys).
  static uint64_t Bits(double key);
  int BucketOf(uint64_t bits) const {
    return bits == last_ ? 0 : 64 - __builtin_clzll(bits ^ last_);
  }
  void Append(int bucket, const Entry& e);
  // Moves bucket b's entries (b > 0) below its minimum, the new `last`.
  void Split(int b);
  uint32_t NewChunk();
  void FreeChunk(uint32_t chunk);
  // Empties the buckets and starts them over from `last` (entries already
  // in chunks are the caller's to push again).
  void ResetBuckets(uint64_t last);
  // Chunks in the buckets' lists.
  std::vector<uint32_t> ChunksInUse() const;

  HugePageVector<Entry> slab_;  // chunk c is [c·kChunk, (c + 1)·kChunk)
  std::vector<uint32_t> next_;  // per chunk: the next in its list
  std::vector<uint8_t> fill_;   // per chunk: entries in it
  uint32_t free_ = kNoChunk;    // free chunks, linked through next_
  size_t free_chunks_ = 0;
  // Per bucket: its list (pushes go to the first chunk, the only one that
  // may be part full), its minimum key and where that entry is.
  std::array<uint32_t, kBuckets> head_;
  std::array<double, kBuckets> min_key_;
  std::array<uint32_t, kBuckets> min_pos_;
  uint64_t non_empty_ = 0;  // bit b − 1: bucket b > 0 holds entries
  uint64_t last_ = 0;
  std::vector<Entry> early_;  // keys below last_: a min-heap
  size_t size_ = 0;
  Work work_;
};

template <typename Update>
void DueQueue::Rewrite(Update update) {
  // Updated in place (each chunk keeps what it keeps, in front), then pushed
  // again against the smallest key left, a chunk at a time: the chunks
  // freed as they are read make the room for the pushes.
  const std::vector<uint32_t> chunks = ChunksInUse();
  double smallest = kInf;
  for (uint32_t c : chunks) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < fill_[c]; ++i) {
      Entry e = slab_[c * kChunk + i];
      if (!update(&e)) continue;
      if (e.key < smallest) smallest = e.key;
      slab_[c * kChunk + kept++] = e;
      ++work_.rewrite_moves;
    }
    fill_[c] = static_cast<uint8_t>(kept);
  }
  std::vector<Entry> early;
  early.swap(early_);
  size_t kept_early = 0;
  for (Entry& e : early) {
    if (!update(&e)) continue;
    if (e.key < smallest) smallest = e.key;
    early[kept_early++] = e;
  }
  ResetBuckets(smallest < kInf ? Bits(smallest) : 0);
  for (uint32_t c : chunks) {
    for (uint32_t i = 0; i < fill_[c]; ++i) {
      const Entry e = slab_[c * kChunk + i];  // a push may move the slab
      Push(e);
    }
    FreeChunk(c);
  }
  for (size_t i = 0; i < kept_early; ++i) Push(early[i]);
}

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_DUE_QUEUE_H_
