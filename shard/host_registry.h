// Politeness hosts of a shard: names to the dense HostIds the index uses,
// and the shard's own copy of each host's politeness (the index keeps one
// too but does not expose it; GetUrlState reports when a host is allowed).
// Host ids are never freed: hosts are few next to URLs, and a politeness
// setting outlives the host's URLs.
#ifndef RECRAWL_SHARD_HOST_REGISTRY_H_
#define RECRAWL_SHARD_HOST_REGISTRY_H_

#include <cstddef>

#include "absl/strings/string_view.h"
#include "shard/index/crawl_index.h"
#include "shard/index/hosts.h"
#include "shard/string_interner.h"

namespace recrawl {
namespace shard {

inline constexpr HostId kNoHost = ~HostId{0};

class HostRegistry {
 public:
  // The id of a normalised host name, new if needed.
  HostId Intern(absl::string_view host) {
    return Intern(StringInterner::Hashed{host, StringInterner::HashOf(host)});
  }
  HostId Intern(const StringInterner::Hashed& host);
  // kNoHost if unknown.
  HostId Find(absl::string_view host) const;
  absl::string_view Name(HostId host) const { return names_.Get(host); }
  size_t size() const { return names_.size(); }

  HostTable::Host& Politeness(HostId host) { return politeness_.Get(host); }
  HostTable::Host FindPoliteness(HostId host) const { return politeness_.Find(host); }
  double AllowedFrom(HostId host) const { return politeness_.AllowedFrom(host); }

  size_t MemoryBytes() const;

 private:
  StringInterner names_;  // ids are HostIds
  HostTable politeness_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_HOST_REGISTRY_H_
