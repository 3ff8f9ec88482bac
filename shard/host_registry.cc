#include "shard/host_registry.h"

namespace recrawl {
namespace shard {

HostId HostRegistry::Intern(const StringInterner::Hashed& host) {
  const HostId id = names_.Intern(host);
  politeness_.Get(id);
  return id;
}

HostId HostRegistry::Find(absl::string_view host) const {
  const uint32_t id = names_.Find(host);
  return id == StringInterner::kNone ? kNoHost : id;
}

size_t HostRegistry::MemoryBytes() const {
  return politeness_.MemoryBytes() + names_.MemoryBytes();
}

}  // namespace shard
}  // namespace recrawl
