#include "shard/string_interner.h"

namespace recrawl {
namespace shard {

StringInterner::StringInterner() : offsets_{0}, ids_(0, Hash{this}, Eq{this}) {}

uint32_t StringInterner::Intern(const Hashed& s) {
  auto it = ids_.find(s);
  if (it != ids_.end()) return *it;
  const uint32_t id = static_cast<uint32_t>(size());
  bytes_.insert(bytes_.end(), s.s.begin(), s.s.end());
  offsets_.push_back(static_cast<uint32_t>(bytes_.size()));
  hashes_.push_back(s.hash);
  ids_.insert(id);
  return id;
}

uint32_t StringInterner::Find(absl::string_view s) const {
  auto it = ids_.find(Hashed{s, HashOf(s)});
  return it == ids_.end() ? kNone : *it;
}

size_t StringInterner::MemoryBytes() const {
  return bytes_.capacity() + (offsets_.capacity() + hashes_.capacity()) * sizeof(uint32_t) +
         ids_.capacity() * (sizeof(uint32_t) + 1);
}

}  // namespace shard
}  // namespace recrawl
