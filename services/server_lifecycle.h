// What every server main() does around serving: stop signals for a graceful
// shutdown, the port file tests and launchers wait for, the drain deadline.
#ifndef RECRAWL_SERVICES_SERVER_LIFECYCLE_H_
#define RECRAWL_SERVICES_SERVER_LIFECYCLE_H_

#include <signal.h>

#include <chrono>
#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"

namespace recrawl {
namespace services {

// Turns off Abseil's mutex deadlock detection for the whole process. Debian
// builds Abseil without NDEBUG, which leaves the detection on: every
// absl::Mutex acquisition (gRPC's own included) updates a process-wide
// lock-order graph under a global lock, and a cycle aborts the process. That
// costs 145 ns against 39 ns per pair of nested locks (measured on the
// development VM). Servers and the benchmarks that stand for them call this at
// the start of main(), before any thread starts; tests keep the detection on.
void TurnOffMutexDeadlockDetection();

// Blocks SIGTERM and SIGINT in the calling thread and the threads it starts
// afterwards, so that only WaitForStopSignal sees them. Call first in main.
sigset_t BlockStopSignals();

// Blocks until SIGTERM or SIGINT arrives; returns it.
int WaitForStopSignal(const sigset_t& signals);

// The same for at most `seconds`: 0 when none arrived by then (a pause
// that a stop signal ends early, as while waiting for a peer at start).
int WaitForStopSignalFor(const sigset_t& signals, double seconds);

// Writes "<grpc port> <metrics port>\n" to `path` whole (a temporary file,
// then renamed: a reader never sees half of it). Nothing for "".
void WritePortFile(const std::string& path, int port, int metrics_port);

// now + `seconds`, for grpc::Server::Shutdown.
std::chrono::system_clock::time_point DeadlineAfter(double seconds);

// Adds the server's one listening address `host:port` (port 0: any free
// one, into *selected_port at BuildAndStart). Without SO_REUSEPORT: with it
// gRPC binds each of its pollers' sockets to a port of its own when given 0
// (several ports, only one of them reported), and with a fixed port a
// second process could bind it too without an error.
void AddListeningAddress(const std::string& host, int port,
                         std::shared_ptr<grpc::ServerCredentials> credentials,
                         grpc::ServerBuilder* builder, int* selected_port);

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_SERVER_LIFECYCLE_H_
