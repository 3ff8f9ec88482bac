// GET over a plain socket on loopback, for tests that read a server's
// Prometheus metrics (Debian's build deps have no HTTP client library).
#ifndef RECRAWL_SERVICES_HTTP_GET_H_
#define RECRAWL_SERVICES_HTTP_GET_H_

#include <string>

namespace recrawl {
namespace services {

// The whole response (status line, headers, body) of GET `path` from
// 127.0.0.1:`port`; "" when the connection fails.
std::string HttpGet(int port, const std::string& path);

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_HTTP_GET_H_
