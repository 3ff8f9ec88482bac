#include "services/server_lifecycle.h"

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace recrawl {
namespace services {

void TurnOffMutexDeadlockDetection() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

int WaitForStopSignal(const sigset_t& signals) {
  int sig = 0;
  sigwait(&signals, &sig);
  return sig;
}

int WaitForStopSignalFor(const sigset_t& signals, double seconds) {
  const double whole = std::floor(std::max(seconds, 0.0));
  timespec timeout;
  timeout.tv_sec = static_cast<time_t>(whole);
  timeout.tv_nsec = static_cast<long>((std::max(seconds, 0.0) - whole) * 1e9);
  for (;;) {
    const int sig = sigtimedwait(&signals, nullptr, &timeout);
    if (sig > 0) return sig;
    if (errno != EINTR) return 0;  // EAGAIN: the time passed
  }
}

void WritePortFile(const std::string& path, int port, int metrics_port) {
  if (path.empty()) return;
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp) << port << " " << metrics_port << "\n";
  std::rename(tmp.c_str(), path.c_str());
}

std::chrono::system_clock::time_point DeadlineAfter(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(
             std::chrono::duration<double>(seconds));
}

void AddListeningAddress(const std::string& host, int port,
                         std::shared_ptr<grpc::ServerCredentials> credentials,
                         grpc::ServerBuilder* builder, int* selected_port) {
  builder->AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder->AddListeningPort(absl::StrCat(host, ":", port), std::move(credentials), selected_port);
}

}  // namespace services
}  // namespace recrawl
