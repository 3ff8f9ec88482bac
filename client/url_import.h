// The lines of a `recrawlctl urls add` file: CSV or JSON lines, told apart
// per line (a line that starts with '{' is JSON).
//
//   CSV:   url,importance[,change_rate,recall,false_rate]
//          https://example.com/a,2.5
//          "https://example.com/b?x=1,2",1,1e-5,0.5,
//   JSON:  {"url": "https://example.com/a", "importance": 2.5, "recall": 0.5}
//
// CSV fields may be quoted ("" inside quotes is a quote); an empty prior
// field leaves that prior to the shard. A first line whose first field is
// "url" is a header. Blank lines and lines starting with '#' are skipped.
// Values are checked for syntax here and for range by the server, whose
// per-item errors the CLI reports by line number.
#ifndef RECRAWL_CLIENT_URL_IMPORT_H_
#define RECRAWL_CLIENT_URL_IMPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/shard.pb.h"

namespace recrawl {
namespace client {

// The fields of a CSV line; INVALID_ARGUMENT for an unterminated quote or
// text after a closing quote.
absl::StatusOr<std::vector<std::string>> SplitCsvLine(absl::string_view line);

// The UrlSpec on `line`, nullopt for a line to skip (`first_line` allows a
// header). INVALID_ARGUMENT names the field, e.g. "importance: not a
// number: \"x\"".
absl::StatusOr<std::optional<UrlSpec>> ParseUrlLine(absl::string_view line, bool first_line);

}  // namespace client
}  // namespace recrawl

#endif  // RECRAWL_CLIENT_URL_IMPORT_H_
