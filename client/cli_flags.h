// recrawlctl's own command-line parsing over Abseil's flag registry:
// absl::ParseCommandLine exits with status 1 on a bad flag and on --help,
// while recrawlctl promises 2 for usage errors and 0 for help.
#ifndef RECRAWL_CLIENT_CLI_FLAGS_H_
#define RECRAWL_CLIENT_CLI_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace recrawl {
namespace client {

struct ParsedArgs {
  // The words that are not flags, in order (everything after "--" too).
  std::vector<std::string> positional;
  // --help (or -h) was given.
  bool help = false;
};

// Sets the flags named in `args` (the arguments after the program name):
// --name=value, --name value, and for booleans --name and --noname.
// INVALID_ARGUMENT names an unknown flag or a bad value.
absl::StatusOr<ParsedArgs> ParseFlags(const std::vector<std::string>& args);

// "  --name=default  help" for every flag defined in a file whose name ends
// with `file_suffix`, sorted by name.
std::string FlagsHelp(absl::string_view file_suffix);

}  // namespace client
}  // namespace recrawl

#endif  // RECRAWL_CLIENT_CLI_FLAGS_H_
