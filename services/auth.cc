#include "services/auth.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace recrawl {
namespace services {
namespace {

constexpr Role kAllRoles[] = {Role::kFetcher, Role::kPinger, Role::kOperator,
                              Role::kInternal};
constexpr size_t kMinTokenLength = 16;
constexpr size_t kMaxTokenLength = 256;

// Equal strings in time that depends on the lengths only.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

absl::StatusOr<std::string> ReadFile(const std::string& path, const char* what) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(what, ": cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

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
  return absl::InvalidArgumentError(absl::StrCat(
      "role: must be fetcher, pinger, operator or internal, not \"", name, "\""));
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
      return absl::InvalidArgumentError(absl::StrCat(
          where, "token: already listed for role ", RoleName(existing), "; a token has one role"));
    }
    table.tokens_.emplace_back(std::string(token), *role);
  }
  return table;
}

absl::StatusOr<TokenTable> TokenTable::Load(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path, "token_file");
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

grpc::Status Authorizer::Check(const grpc::ServerContext& context, absl::string_view method,
                               Roles allowed) const {
  if (tokens_ == nullptr) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  const auto it = metadata.find("authorization");
  const std::string needs = absl::StrCat(method, " needs a token of role ", allowed.ToString());
  if (it == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        absl::StrCat("missing \"authorization: Bearer <token>\" metadata; ", needs));
  }
  absl::string_view value(it->second.data(), it->second.size());
  if (!absl::ConsumePrefix(&value, "Bearer ")) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        absl::StrCat("authorization: must be \"Bearer <token>\"; ", needs));
  }
  Role role = Role::kFetcher;
  if (!tokens_->Find(value, &role)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        absl::StrCat("authorization: unknown token; ", needs));
  }
  if (!allowed.Has(role)) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat(needs, ", the caller's token has role ", RoleName(role)));
  }
  return grpc::Status::OK;
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
      return absl::InvalidArgumentError(absl::StrCat(
          "token: character ", i + 1, " is not printable ASCII (spaces, line breaks and "
          "other bytes cannot travel in a header)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ClientTokenFromFile(const std::string& path, Role role) {
  absl::StatusOr<std::string> text = ReadFile(path, "token_file");
  if (!text.ok()) return text.status();
  const absl::string_view stripped = absl::StripAsciiWhitespace(*text);
  // A single token: one line, one field.
  if (!stripped.empty() && stripped.find_first_of(" \t\r\n") == absl::string_view::npos &&
      stripped[0] != '#') {
    if (absl::Status s = ValidateToken(stripped); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", s.message()));
    }
    return std::string(stripped);
  }
  absl::StatusOr<TokenTable> table = TokenTable::Parse(*text);
  if (!table.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", table.status().message()));
  }
  std::string token = table->TokenOf(role);
  if (token.empty()) {
    return absl::NotFoundError(
        absl::StrCat(path, ": no token of role ", RoleName(role), " (--role)"));
  }
  return token;
}

void AttachToken(grpc::ClientContext* context, const std::string& token) {
  if (!token.empty()) context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const ServerTlsOptions& options) {
  if (options.cert_file.empty()) {
    if (!options.key_file.empty() || !options.client_ca_file.empty()) {
      return absl::InvalidArgumentError("tls_key, tls_client_ca: need tls_cert");
    }
    return grpc::InsecureServerCredentials();
  }
  if (options.key_file.empty()) return absl::InvalidArgumentError("tls_key: needed with tls_cert");
  absl::StatusOr<std::string> cert = ReadFile(options.cert_file, "tls_cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadFile(options.key_file, "tls_key");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  if (!options.client_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadFile(options.client_ca_file, "tls_client_ca");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    ssl.client_certificate_request =
        options.require_client_cert ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                    : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
  } else if (options.require_client_cert) {
    return absl::InvalidArgumentError("tls_require_client_cert: needs tls_client_ca");
  }
  return grpc::SslServerCredentials(ssl);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const ClientTlsOptions& options) {
  if (options.ca_file.empty()) {
    if (!options.cert_file.empty()) return absl::InvalidArgumentError("tls_cert: needs tls_ca");
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions ssl;
  absl::StatusOr<std::string> ca = ReadFile(options.ca_file, "tls_ca");
  if (!ca.ok()) return ca.status();
  ssl.pem_root_certs = *ca;
  if (!options.cert_file.empty()) {
    absl::StatusOr<std::string> cert = ReadFile(options.cert_file, "tls_cert");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadFile(options.key_file, "tls_key");
    if (!key.ok()) return key.status();
    ssl.pem_cert_chain = *cert;
    ssl.pem_private_key = *key;
  }
  return grpc::SslCredentials(ssl);
}

std::shared_ptr<grpc::Channel> CreateChannelFor(
    const std::string& address, const std::shared_ptr<grpc::ChannelCredentials>& credentials,
    const ClientTlsOptions& options, grpc::ChannelArguments args) {
  if (!options.server_name.empty()) args.SetSslTargetNameOverride(options.server_name);
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(address, credentials, args);
}

}  // namespace services
}  // namespace recrawl
