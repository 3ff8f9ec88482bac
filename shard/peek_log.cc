#include "shard/peek_log.h"

namespace recrawl {
namespace shard {

uint64_t PeekLog::Begin() {
  const uint64_t id = next_id_;
  next_id_ = next_id_ == UINT64_MAX ? 1 : next_id_ + 1;
  last_ = static_cast<size_t>(id % kMaxPeeks);
  Entry& entry = ring_[last_];
  entry.id = id;
  entry.picks.clear();
  return id;
}

bool PeekLog::Take(uint64_t id, std::vector<Pick>* picks) {
  picks->clear();
  Entry& entry = ring_[static_cast<size_t>(id % kMaxPeeks)];
  if (id == 0 || entry.id != id) return false;
  entry.id = 0;
  picks->swap(entry.picks);
  return true;
}

}  // namespace shard
}  // namespace recrawl
