#include "shard/index/due_queue.h"

#include <algorithm>
#include <cstring>

namespace recrawl {
namespace shard {
namespace {

// std heap order for a min-heap.
bool Later(const DueQueue::Entry& a, const DueQueue::Entry& b) { return a.key > b.key; }

}  // namespace

DueQueue::DueQueue() { ResetBuckets(0); }

uint64_t DueQueue::Bits(double key) {
  uint64_t bits;
  std::memcpy(&bits, &key, sizeof bits);
  constexpr uint64_t kSign = uint64_t{1} << 63;
  // Positive keys above every negative one; negative ones in reverse.
  return (bits & kSign) != 0 ? ~bits : bits | kSign;
}

void DueQueue::Reserve(size_t entries) {
  // The chunks' links in step (doubling them would cost more than the
  // slab's growth).
  const size_t chunks = (entries + kChunk - 1) / kChunk + kSlackChunks;
  if (chunks * kChunk <= slab_.capacity()) return;
  work_.growth_copies += slab_.size();
  slab_.reserve(chunks * kChunk);
  next_.reserve(chunks);
  fill_.reserve(chunks);
}

size_t DueQueue::MemoryBytes() const {
  return AllocatedBytes(slab_) + next_.capacity() * sizeof(uint32_t) +
         fill_.capacity() * sizeof(uint8_t) + early_.capacity() * sizeof(Entry);
}

void DueQueue::Push(const Entry& e) {
  ++size_;
  const uint64_t bits = Bits(e.key);
  if (bits < last_) {
    early_.push_back(e);
    std::push_heap(early_.begin(), early_.end(), Later);
    return;
  }
  Append(BucketOf(bits), e);
}

void DueQueue::Append(int b, const Entry& e) {
  uint32_t c = head_[b];
  if (c == kNoChunk || fill_[c] == kChunk) {
    const uint32_t fresh = NewChunk();
    next_[fresh] = c;
    head_[b] = c = fresh;
  }
  const uint32_t pos = c * kChunk + fill_[c]++;
  slab_[pos] = e;
  if (b > 0) {
    non_empty_ |= uint64_t{1} << (b - 1);
    if (e.key < min_key_[b]) {
      min_key_[b] = e.key;
      min_pos_[b] = pos;
    }
  }
}

bool DueQueue::PopDue(double t, Entry* e) {
  if (!early_.empty()) {
    // Below every bucketed key.
    if (!(early_.front().key <= t)) return false;
    std::pop_heap(early_.begin(), early_.end(), Later);
    *e = early_.back();
    early_.pop_back();
    --size_;
    return true;
  }
  if (head_[0] == kNoChunk) {
    if (non_empty_ == 0) return false;
    const int b = __builtin_ctzll(non_empty_) + 1;
    if (!(min_key_[b] <= t)) return false;
    Split(b);
  }
  const uint32_t c = head_[0];
  const uint32_t pos = c * kChunk + fill_[c] - 1;
  if (!(slab_[pos].key <= t)) return false;  // the clock went back
  *e = slab_[pos];
  --size_;
  if (--fill_[c] == 0) {
    head_[0] = next_[c];
    FreeChunk(c);
  }
  return true;
}

const DueQueue::Entry* DueQueue::Next() const {
  if (!early_.empty()) return &early_.front();
  if (head_[0] != kNoChunk) {
    const uint32_t c = head_[0];
    return &slab_[c * kChunk + fill_[c] - 1];
  }
  if (non_empty_ == 0) return nullptr;
  return &slab_[min_pos_[__builtin_ctzll(non_empty_) + 1]];
}

void DueQueue::Split(int b) {
  last_ = Bits(min_key_[b]);
  uint32_t c = head_[b];
  head_[b] = kNoChunk;
  min_key_[b] = kInf;
  non_empty_ &= ~(uint64_t{1} << (b - 1));
  // Every key here is >= the new last and agrees with it above bit b − 1:
  // each lands in a bucket below b (the minimum in bucket 0).
  while (c != kNoChunk) {
    const uint32_t next = next_[c];
    for (uint32_t i = 0; i < fill_[c]; ++i) {
      const Entry e = slab_[c * kChunk + i];  // Append may move the slab
      Append(BucketOf(Bits(e.key)), e);
      ++work_.split_moves;
    }
    FreeChunk(c);
    c = next;
  }
}

uint32_t DueQueue::NewChunk() {
  uint32_t c = free_;
  if (c != kNoChunk) {
    free_ = next_[c];
    --free_chunks_;
  } else {
    if (slab_.size() + kChunk > slab_.capacity()) {
      Reserve(slab_.size() + slab_.size() / kGrowthDivisor);
    }
    c = static_cast<uint32_t>(slab_.size() / kChunk);
    slab_.resize(slab_.size() + kChunk);
    next_.push_back(kNoChunk);
    fill_.push_back(0);
  }
  fill_[c] = 0;
  return c;
}

void DueQueue::FreeChunk(uint32_t chunk) {
  fill_[chunk] = 0;
  next_[chunk] = free_;
  free_ = chunk;
  ++free_chunks_;
}

void DueQueue::ResetBuckets(uint64_t last) {
  head_.fill(kNoChunk);
  min_key_.fill(kInf);
  min_pos_.fill(0);
  non_empty_ = 0;
  last_ = last;
  early_.clear();
  size_ = 0;
}

std::vector<uint32_t> DueQueue::ChunksInUse() const {
  std::vector<uint32_t> chunks;
  for (int b = 0; b < kBuckets; ++b) {
    for (uint32_t c = head_[b]; c != kNoChunk; c = next_[c]) {
      chunks.push_back(c);
    }
  }
  return chunks;
}

void DueQueue::Clear() {
  slab_.clear();
  next_.clear();
  fill_.clear();
  free_ = kNoChunk;
  free_chunks_ = 0;
  ResetBuckets(0);
  std::vector<Entry>().swap(early_);
}

}  // namespace shard
}  // namespace recrawl
