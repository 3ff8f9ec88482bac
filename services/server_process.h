// A server binary run as a child process, for tests that cross the process
// boundary: started with arguments, found through the port file it writes,
// stopped with a signal.
#ifndef RECRAWL_SERVICES_SERVER_PROCESS_H_
#define RECRAWL_SERVICES_SERVER_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace recrawl {
namespace services {

class ServerProcess {
 public:
  ServerProcess() = default;
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  // Kills the process if it still runs.
  ~ServerProcess();

  // Runs `binary` with `args` plus --port_file, stderr to `log_file`, and
  // waits up to `timeout_seconds` for it to serve.
  absl::Status Start(const std::string& binary, std::vector<std::string> args,
                     const std::string& port_file, const std::string& log_file,
                     double timeout_seconds = 30);

  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }
  pid_t pid() const { return pid_; }

  // Sends `sig` and waits up to `timeout_seconds` for the process to end.
  // Returns its wait status (or -1 if it had to be killed).
  int Stop(int sig, double timeout_seconds = 30);

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  int metrics_port_ = -1;
};

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_SERVER_PROCESS_H_
