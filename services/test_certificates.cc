#include "services/test_certificates.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace services {

absl::Status MakeCertificate(const std::string& dir, const std::string& name) {
  const std::string command = absl::StrCat(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2",
      " -subj /CN=", name, " -addext subjectAltName=DNS:", name, ",IP:127.0.0.1", " -keyout ", dir,
      "/", name, ".key -out ", dir, "/", name, ".pem 2>", dir, "/", name, ".log");
  if (std::system(command.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("failed: ", command));
  }
  return absl::OkStatus();
}

}  // namespace services
}  // namespace recrawl
