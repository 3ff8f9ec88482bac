// Self-signed TLS certificates for tests, made by the openssl CLI
// (tools/install_deps.sh): an EC key takes milliseconds, and nothing with
// an expiry date is checked in.
#ifndef RECRAWL_SERVICES_TEST_CERTIFICATES_H_
#define RECRAWL_SERVICES_TEST_CERTIFICATES_H_

#include <string>

#include "absl/status/status.h"

namespace recrawl {
namespace services {

// Writes <dir>/<name>.pem and <dir>/<name>.key: a certificate for `name`
// (CN and subjectAltName, plus IP 127.0.0.1), its own CA, valid two days.
absl::Status MakeCertificate(const std::string& dir, const std::string& name);

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_TEST_CERTIFICATES_H_
