#include "ingest/feeds/hub_signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace recrawl {
namespace feeds {
namespace {

const EVP_MD* Digest(absl::string_view method) {
  if (method == "sha1") return EVP_sha1();
  if (method == "sha256") return EVP_sha256();
  if (method == "sha384") return EVP_sha384();
  if (method == "sha512") return EVP_sha512();
  return nullptr;
}

// HMAC of `body` under `secret`; empty on an OpenSSL failure.
std::string Hmac(const EVP_MD* md, absl::string_view secret, absl::string_view body) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  // HMAC takes a null key pointer as "no key"; an empty secret still has
  // to be a key.
  static const char kEmpty = 0;
  const void* key = secret.empty() ? &kEmpty : secret.data();
  if (HMAC(md, key, static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(body.data()), body.size(), out,
           &size) == nullptr) {
    return "";
  }
  return std::string(reinterpret_cast<const char*>(out), size);
}

bool IsHex(absl::string_view s) {
  for (char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

absl::Status VerifyHubSignature(absl::string_view header, absl::string_view secret,
                                absl::string_view body) {
  header = absl::StripAsciiWhitespace(header);
  if (header.empty()) {
    return absl::PermissionDeniedError(
        "X-Hub-Signature: missing, and the subscription has a secret");
  }
  const size_t eq = header.find('=');
  const std::string method =
      absl::AsciiStrToLower(header.substr(0, eq == absl::string_view::npos ? 0 : eq));
  const EVP_MD* md = eq == absl::string_view::npos ? nullptr : Digest(method);
  if (md == nullptr) {
    return absl::PermissionDeniedError(
        "X-Hub-Signature: must be sha1=, sha256=, sha384= or sha512= followed by hex");
  }
  const absl::string_view hex = header.substr(eq + 1);
  const size_t size = static_cast<size_t>(EVP_MD_get_size(md));
  if (hex.size() != 2 * size || !IsHex(hex)) {
    return absl::PermissionDeniedError(
        absl::StrCat("X-Hub-Signature: a ", method, " signature is ", 2 * size, " hex digits"));
  }
  const std::string expected = Hmac(md, secret, body);
  if (expected.size() != size) return absl::InternalError("X-Hub-Signature: HMAC failed");
  const std::string given = absl::HexStringToBytes(hex);
  if (CRYPTO_memcmp(given.data(), expected.data(), size) != 0) {
    return absl::PermissionDeniedError("X-Hub-Signature: does not match the body");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SignHubBody(absl::string_view method, absl::string_view secret,
                                        absl::string_view body) {
  const EVP_MD* md = Digest(method);
  if (md == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("method: \"", method, "\" is not a hub method"));
  }
  const std::string mac = Hmac(md, secret, body);
  if (mac.empty()) return absl::InternalError("HMAC failed");
  return absl::StrCat(method, "=", absl::BytesToHexString(mac));
}

}  // namespace feeds
}  // namespace recrawl
