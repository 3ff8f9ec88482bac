#include "shard/host_registry.h"

namespace recrawl {
namespace shard {

HostId HostRegistry::Intern(absl::string_view host) {
  auto it = ids_.find(host);
  if (it != ids_.end()) return it->second;
  const HostId id = static_cast<HostId>(names_.size());
  names_.emplace_back(host);
  ids_.emplace(std::string(host), id);
  politeness_.Get(id);
  return id;
}

HostId HostRegistry::Find(absl::string_view host) const {
  auto it = ids_.find(host);
  return it == ids_.end() ? kNoHost : it->second;
}

size_t HostRegistry::MemoryBytes() const {
  size_t bytes = politeness_.MemoryBytes() + ids_.capacity() * 40;
  for (const std::string& name : names_) bytes += 2 * name.capacity() + 32;
  return bytes;
}

}  // namespace shard
}  // namespace recrawl
