// Dense ids for strings that many URLs share (hosts, "scheme://authority"
// prefixes), each string stored once.
//
// A map from std::string to id plus a vector of the names would keep every
// string twice, each with a 32-byte std::string and, past 15 bytes, a heap
// block of its own: ~130 bytes a host name, and two cache misses a lookup
// (the slot, then the heap block to compare). Here the strings lie back to
// back in one buffer and the hash set holds only ids (4 bytes), hashed and
// compared through the buffer.
#ifndef RECRAWL_SHARD_STRING_INTERNER_H_
#define RECRAWL_SHARD_STRING_INTERNER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

namespace recrawl {
namespace shard {

class StringInterner {
 public:
  static constexpr uint32_t kNone = ~uint32_t{0};

  StringInterner();
  // The set's functors point at this object.
  StringInterner(const StringInterner&) = delete;
  StringInterner& operator=(const StringInterner&) = delete;

  // A string with its hash (HashOf), for a caller that computes hashes
  // elsewhere (e.g. on the threads that decode a start-up scan).
  struct Hashed {
    absl::string_view s;
    uint32_t hash;
  };
  static uint32_t HashOf(absl::string_view s) {
    return static_cast<uint32_t>(absl::Hash<absl::string_view>()(s));
  }

  // The id of `s`, new (the next one) if needed.
  uint32_t Intern(absl::string_view s) { return Intern(Hashed{s, HashOf(s)}); }
  uint32_t Intern(const Hashed& s);
  // Loads the set's lines for `s` into the cache (ahead of an Intern or a
  // Find of it; reads only the hash).
  void Prefetch(const Hashed& s) const { ids_.prefetch(s); }
  // kNone if `s` was never interned.
  uint32_t Find(absl::string_view s) const;
  absl::string_view Get(uint32_t id) const {
    return absl::string_view(bytes_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]);
  }
  size_t size() const { return offsets_.size() - 1; }
  // Bytes of the tables (capacity).
  size_t MemoryBytes() const;

 private:
  // Each id's hash is kept (4 bytes), so that growing the set rehashes
  // without reading the strings.
  struct Hash {
    using is_transparent = void;
    const StringInterner* interner;
    size_t operator()(uint32_t id) const { return interner->hashes_[id]; }
    size_t operator()(const Hashed& s) const { return s.hash; }
  };
  struct Eq {
    using is_transparent = void;
    const StringInterner* interner;
    absl::string_view View(uint32_t id) const { return interner->Get(id); }
    absl::string_view View(const Hashed& s) const { return s.s; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return View(a) == View(b);
    }
  };

  std::vector<char> bytes_;
  // String id's bytes are [offsets_[id], offsets_[id + 1]).
  std::vector<uint32_t> offsets_;
  std::vector<uint32_t> hashes_;  // by id
  absl::flat_hash_set<uint32_t, Hash, Eq> ids_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_STRING_INTERNER_H_
