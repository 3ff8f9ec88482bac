#include "services/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace services {
namespace {

using Steady = std::chrono::steady_clock;

Steady::time_point After(double seconds) {
  return Steady::now() +
         std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

ServerProcess::~ServerProcess() {
  if (pid_ > 0) Stop(SIGKILL);
}

absl::Status ServerProcess::Start(const std::string& binary, std::vector<std::string> args,
                                  const std::string& port_file, const std::string& log_file,
                                  double timeout_seconds) {
  std::remove(port_file.c_str());
  args.insert(args.begin(), binary);
  args.push_back("--port_file=" + port_file);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    const int fd = open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  pid_ = pid;
  const auto deadline = After(timeout_seconds);
  while (Steady::now() < deadline) {
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::InternalError(absl::StrCat(binary, " exited before serving; see ", log_file));
    }
    std::ifstream in(port_file);
    if (in >> port_ >> metrics_port_) return absl::OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Stop(SIGKILL);
  return absl::DeadlineExceededError(
      absl::StrCat(binary, " did not serve within ", timeout_seconds, " s; see ", log_file));
}

int ServerProcess::Stop(int sig, double timeout_seconds) {
  if (pid_ <= 0) return -1;
  kill(pid_, sig);
  const auto deadline = After(timeout_seconds);
  int status = -1;
  while (true) {
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (Steady::now() >= deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      status = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
  return status;
}

}  // namespace services
}  // namespace recrawl
