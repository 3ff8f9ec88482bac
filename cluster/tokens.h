// Roles and tokens: the token file's format, which recrawl_local writes,
// the servers read to know who may call what, and clients read to pick
// their own token.
//
// Token file, one token per line:
//
//   # comment
//   <role> <token>
//
// role is fetcher, pinger, operator or internal; a token is 16 to 256
// printable characters without spaces; a role may have several tokens
// (rotation), a token belongs to one role. Thread-safe (immutable after
// Parse/Load).
#ifndef RECRAWL_CLUSTER_TOKENS_H_
#define RECRAWL_CLUSTER_TOKENS_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace recrawl {
namespace cluster {

enum class Role : uint8_t { kFetcher = 0, kPinger = 1, kOperator = 2, kInternal = 3 };

// A set of roles, as a bit mask.
class Roles {
 public:
  constexpr Roles() = default;
  constexpr Roles(std::initializer_list<Role> roles) {
    for (Role r : roles) bits_ |= Bit(r);
  }
  static constexpr Roles All() {
    return {Role::kFetcher, Role::kPinger, Role::kOperator, Role::kInternal};
  }
  constexpr bool Has(Role role) const { return (bits_ & Bit(role)) != 0; }
  // "fetcher, operator or internal".
  std::string ToString() const;

 private:
  static constexpr uint8_t Bit(Role r) { return uint8_t{1} << static_cast<int>(r); }
  uint8_t bits_ = 0;
};

absl::string_view RoleName(Role role);
absl::StatusOr<Role> ParseRole(absl::string_view name);

// Token → role.
class TokenTable {
 public:
  // Parses the token file's text (format above). INVALID_ARGUMENT names the
  // line.
  static absl::StatusOr<TokenTable> Parse(absl::string_view text);
  static absl::StatusOr<TokenTable> Load(const std::string& path);

  // Sets *role and returns true when `token` is known. Compares every
  // stored token in full, so the time taken does not say how much matched.
  bool Find(absl::string_view token, Role* role) const;
  // The first token of `role`, "" when it has none (a server's own token
  // toward the servers it calls).
  std::string TokenOf(Role role) const;
  size_t size() const { return tokens_.size(); }

 private:
  std::vector<std::pair<std::string, Role>> tokens_;
};

// OK when `token` is usable: 16 to 256 characters, each printable ASCII
// other than space. The message says what is wrong without showing the
// token.
absl::Status ValidateToken(absl::string_view token);

// The text of the file `path` that flag `flag` names; NOT_FOUND naming
// both when it cannot be read.
absl::StatusOr<std::string> ReadFlagFile(const std::string& path, const char* flag);

}  // namespace cluster
}  // namespace recrawl

#endif  // RECRAWL_CLUSTER_TOKENS_H_
