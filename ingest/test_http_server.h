// A cpp-httplib server on 127.0.0.1 (any free port) for tests: routes are
// added to server() before Start; Stop (or the destructor) ends it, waiting
// for the handlers in flight. Whatever a handler uses must outlive that:
// declare the server after it (a fixture's member last), since a client
// such as the gateway may still be calling as a test ends.
#ifndef RECRAWL_INGEST_TEST_HTTP_SERVER_H_
#define RECRAWL_INGEST_TEST_HTTP_SERVER_H_

#include <httplib.h>

#include <chrono>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace ingest {

class TestHttpServer {
 public:
  TestHttpServer() = default;
  ~TestHttpServer() { Stop(); }
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  httplib::Server& server() { return server_; }

  // Binds 127.0.0.1 and serves on a thread; returns the port (0: failed).
  int Start() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) return 0;
    // The socket already listens: connections made before the thread runs
    // wait in its backlog.
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // Server::stop does nothing before the loop runs.
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return port_;
  }
  void Stop() {
    if (thread_.joinable()) {
      server_.stop();
      thread_.join();
    }
  }
  int port() const { return port_; }
  // "http://127.0.0.1:<port><path>".
  std::string Url(const std::string& path) const {
    return absl::StrCat("http://127.0.0.1:", port_, path);
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace ingest
}  // namespace recrawl

#endif  // RECRAWL_INGEST_TEST_HTTP_SERVER_H_
