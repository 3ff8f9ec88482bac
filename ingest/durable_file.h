// Replacing a small file whole, durably: readers (and a restart after a
// crash or power loss) see either the old contents or the new, never a mix.
#ifndef RECRAWL_INGEST_DURABLE_FILE_H_
#define RECRAWL_INGEST_DURABLE_FILE_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace recrawl {
namespace ingest {

// Writes `contents` to "<path>.tmp", fsyncs it, renames it over `path` and
// fsyncs the directory: when it returns OK the new contents survive a
// crash. INTERNAL naming the path and the failing call otherwise (`path`
// then holds its old contents). Not safe for two writers of one path at
// once.
absl::Status ReplaceFileDurably(const std::string& path, absl::string_view contents);

// The whole contents of the file at `path` as ReplaceFileDurably left it;
// nullopt when there is no such file. DATA_LOSS naming the path when it
// exists but cannot be read.
absl::StatusOr<std::optional<std::string>> ReadFileIfPresent(const std::string& path);

}  // namespace ingest
}  // namespace recrawl

#endif  // RECRAWL_INGEST_DURABLE_FILE_H_
