// WebSub's content signature (https://www.w3.org/TR/websub/#signing-content):
// a hub that was given a secret signs each delivery with
//   X-Hub-Signature: <method>=<hex HMAC of the body keyed by the secret>
// where <method> is sha1, sha256, sha384 or sha512. HMACs are OpenSSL's;
// the comparison is constant-time (CRYPTO_memcmp).
//
// Pure functions; thread-safe.
#ifndef RECRAWL_INGEST_FEEDS_HUB_SIGNATURE_H_
#define RECRAWL_INGEST_FEEDS_HUB_SIGNATURE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace recrawl {
namespace feeds {

// OK when `header` (the X-Hub-Signature value) is `body`'s HMAC under
// `secret`. PERMISSION_DENIED, naming X-Hub-Signature, when the header is
// empty, its method is not one of the four, its value is not hex of the
// method's length or the HMAC differs.
absl::Status VerifyHubSignature(absl::string_view header, absl::string_view secret,
                                absl::string_view body);

// The header value a hub would send: "<method>=<lower-case hex>".
// INVALID_ARGUMENT for another method. (For tests and hub stand-ins.)
absl::StatusOr<std::string> SignHubBody(absl::string_view method, absl::string_view secret,
                                        absl::string_view body);

}  // namespace feeds
}  // namespace recrawl

#endif  // RECRAWL_INGEST_FEEDS_HUB_SIGNATURE_H_
