#include "sim/pages_csv.h"

#include <fstream>
#include <map>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace recrawl {
namespace sim {
namespace {

enum Column { kImportance, kChangeRate, kRecall, kFalseRate, kCompleteObs };

const std::map<std::string, Column>& ColumnNames() {
  static const auto* names = new std::map<std::string, Column>{{"importance", kImportance},
                                                               {"change_rate", kChangeRate},
                                                               {"recall", kRecall},
                                                               {"false_rate", kFalseRate},
                                                               {"complete_obs", kCompleteObs}};
  return *names;
}

}  // namespace

absl::StatusOr<std::vector<PageRow>> ParsePagesCsv(absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  size_t line_no = 0;
  std::vector<Column> columns;
  std::vector<PageRow> rows;
  for (absl::string_view raw : lines) {
    ++line_no;
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
    if (columns.empty()) {
      bool seen[5] = {false, false, false, false, false};
      for (absl::string_view f : fields) {
        const std::string name = absl::AsciiStrToLower(absl::StripAsciiWhitespace(f));
        auto it = ColumnNames().find(name);
        if (it == ColumnNames().end()) {
          return absl::InvalidArgumentError(
              absl::StrCat("line ", line_no, ": unknown column '", name,
                           "' (expected importance, change_rate, recall, false_rate, "
                           "complete_obs)"));
        }
        if (seen[it->second]) {
          return absl::InvalidArgumentError(
              absl::StrCat("line ", line_no, ": column '", name, "' repeated"));
        }
        seen[it->second] = true;
        columns.push_back(it->second);
      }
      if (!seen[kImportance] || !seen[kChangeRate]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "line ", line_no, ": header must name the columns importance and change_rate"));
      }
      continue;
    }
    if (fields.size() != columns.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "line ", line_no, ": expected ", columns.size(), " fields, got ", fields.size()));
    }
    PageRow row;
    for (size_t k = 0; k < fields.size(); ++k) {
      const absl::string_view f = absl::StripAsciiWhitespace(fields[k]);
      std::string name;
      for (const auto& [n, c] : ColumnNames()) {
        if (c == columns[k]) name = n;
      }
      double value = 0.0;
      if (f.empty() && columns[k] != kImportance && columns[k] != kChangeRate) {
        continue;  // optional value left empty: default
      }
      if (!absl::SimpleAtod(f, &value)) {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", line_no, ", column ", name, ": not a number: '", f, "'"));
      }
      switch (columns[k]) {
        case kImportance:
          row.params.importance = value;
          break;
        case kChangeRate:
          row.params.change_rate = value;
          break;
        case kRecall:
          row.params.recall = value;
          break;
        case kFalseRate:
          row.params.false_rate = value;
          break;
        case kCompleteObs:
          if (value != 0.0 && value != 1.0) {
            return absl::InvalidArgumentError(absl::StrCat(
                "line ", line_no, ", column complete_obs: must be 0 or 1, got '", f, "'"));
          }
          row.complete_obs = value == 1.0;
          break;
      }
    }
    if (absl::Status s = policy::PageModel::Create(row.params).status(); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_no, ", column ", s.message()));
    }
    rows.push_back(row);
  }
  if (columns.empty()) {
    return absl::InvalidArgumentError("no header row (importance,change_rate,...)");
  }
  return rows;
}

absl::StatusOr<std::vector<PageRow>> ReadPagesCsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParsePagesCsv(buffer.str());
}

}  // namespace sim
}  // namespace recrawl
