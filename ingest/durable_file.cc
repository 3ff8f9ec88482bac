#include "ingest/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace ingest {
namespace {

absl::Status Failed(absl::string_view call, const std::string& path) {
  return absl::InternalError(absl::StrCat(call, " ", path, ": ", std::strerror(errno)));
}

// Writes all of `data` to `fd`.
bool WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

absl::Status ReplaceFileDurably(const std::string& path, absl::string_view contents) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Failed("open", tmp);
  if (!WriteAll(fd, contents)) {
    const absl::Status s = Failed("write", tmp);
    ::close(fd);
    return s;
  }
  if (::fsync(fd) != 0) {
    const absl::Status s = Failed("fsync", tmp);
    ::close(fd);
    return s;
  }
  if (::close(fd) != 0) return Failed("close", tmp);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Failed("rename to", path);
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return Failed("open", dir);
  const bool synced = ::fsync(dir_fd) == 0;
  const absl::Status s = synced ? absl::OkStatus() : Failed("fsync", dir);
  ::close(dir_fd);
  return s;
}

absl::StatusOr<std::optional<std::string>> ReadFileIfPresent(const std::string& path) {
  std::error_code missing;
  if (!std::filesystem::exists(path, missing) && !missing) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::DataLossError(absl::StrCat(path, ": cannot read"));
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": cannot read"));
  return bytes.str();
}

}  // namespace ingest
}  // namespace recrawl
