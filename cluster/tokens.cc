#include "cluster/tokens.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace recrawl {
namespace cluster {
namespace {

constexpr Role kAllRoles[] = {Role::kFetcher, Role::kPinger, Role::kOperator, Role::kInternal};
constexpr size_t kMinTokenLength = 16;
constexpr size_t kMaxTokenLength = 256;

// Equal strings in time that depends on the lengths only.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

absl::StatusOr<std::string> ReadFlagFile(const std::string& path, const char* flag) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(flag, ": cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::string_view RoleName(Role role) {
  switch (role) {
    case Role::kFetcher:
      return "fetcher";
    case Role::kPinger:
      return "pinger";
    case Role::kOperator:
      return "operator";
    case Role::kInternal:
      return "internal";
  }
  return "?";
}

absl::StatusOr<Role> ParseRole(absl::string_view name) {
  for (Role r : kAllRoles) {
    if (name == RoleName(r)) return r;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("role: must be fetcher, pinger, operator or internal, not \"", name, "\""));
}

std::string Roles::ToString() const {
  std::vector<absl::string_view> names;
  for (Role r : kAllRoles) {
    if (Has(r)) names.push_back(RoleName(r));
  }
  if (names.empty()) return "no role";
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) absl::StrAppend(&out, i + 1 == names.size() ? " or " : ", ");
    absl::StrAppend(&out, names[i]);
  }
  return out;
}

absl::StatusOr<TokenTable> TokenTable::Parse(absl::string_view text) {
  TokenTable table;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    const std::string where = absl::StrCat("token file line ", line_number, ": ");
    if (fields.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "expected \"<role> <token>\", got ", fields.size(), " fields"));
    }
    absl::StatusOr<Role> role = ParseRole(fields[0]);
    if (!role.ok()) return absl::InvalidArgumentError(absl::StrCat(where, role.status().message()));
    const absl::string_view token = fields[1];
    if (absl::Status s = ValidateToken(token); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where, s.message()));
    }
    Role existing = Role::kFetcher;
    if (table.Find(token, &existing)) {
      return absl::InvalidArgumentError(absl::StrCat(where, "token: already listed for role ",
                                                     RoleName(existing), "; a token has one role"));
    }
    table.tokens_.emplace_back(std::string(token), *role);
  }
  return table;
}

absl::StatusOr<TokenTable> TokenTable::Load(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFlagFile(path, "token_file");
  if (!text.ok()) return text.status();
  absl::StatusOr<TokenTable> table = Parse(*text);
  if (!table.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", table.status().message()));
  }
  if (table->size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no tokens"));
  }
  return table;
}

bool TokenTable::Find(absl::string_view token, Role* role) const {
  bool found = false;
  for (const auto& [known, known_role] : tokens_) {
    if (ConstantTimeEquals(token, known)) {
      found = true;
      *role = known_role;
    }
  }
  return found;
}

std::string TokenTable::TokenOf(Role role) const {
  for (const auto& [token, token_role] : tokens_) {
    if (token_role == role) return token;
  }
  return "";
}

absl::Status ValidateToken(absl::string_view token) {
  if (token.size() < kMinTokenLength || token.size() > kMaxTokenLength) {
    return absl::InvalidArgumentError(absl::StrCat("token: must have ", kMinTokenLength, " to ",
                                                   kMaxTokenLength, " characters, has ",
                                                   token.size()));
  }
  for (size_t i = 0; i < token.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(token[i]);
    if (c < 0x21 || c > 0x7e) {
      return absl::InvalidArgumentError(
          absl::StrCat("token: character ", i + 1,
                       " is not printable ASCII (spaces, line breaks and "
                       "other bytes cannot travel in a header)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace cluster
}  // namespace recrawl
