// What every server main() does around serving: stop signals for a graceful
// shutdown, the port file tests and launchers wait for, the drain deadline.
#ifndef RECRAWL_SERVICES_SERVER_LIFECYCLE_H_
#define RECRAWL_SERVICES_SERVER_LIFECYCLE_H_

#include <signal.h>

#include <chrono>
#include <string>

namespace recrawl {
namespace services {

// Blocks SIGTERM and SIGINT in the calling thread and the threads it starts
// afterwards, so that only WaitForStopSignal sees them. Call first in main.
sigset_t BlockStopSignals();

// Blocks until SIGTERM or SIGINT arrives; returns it.
int WaitForStopSignal(const sigset_t& signals);

// Writes "<grpc port> <metrics port>\n" to `path` whole (a temporary file,
// then renamed: a reader never sees half of it). Nothing for "".
void WritePortFile(const std::string& path, int port, int metrics_port);

// now + `seconds`, for grpc::Server::Shutdown.
std::chrono::system_clock::time_point DeadlineAfter(double seconds);

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_SERVER_LIFECYCLE_H_
