#include "client/url_import.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/url_line.pb.h"
#include "google/protobuf/util/json_util.h"

namespace recrawl {
namespace client {
namespace {

constexpr const char* kPriorNames[] = {"change_rate", "recall", "false_rate"};

absl::StatusOr<double> ParseNumber(absl::string_view text, const char* field) {
  double value;
  if (!absl::SimpleAtod(text, &value)) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": not a number: \"", text, "\""));
  }
  return value;
}

absl::StatusOr<UrlSpec> FromCsv(const std::vector<std::string>& fields) {
  if (fields.size() < 2 || fields.size() > 5) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected url,importance[,change_rate,recall,false_rate], got ", fields.size(), " fields"));
  }
  UrlSpec spec;
  spec.set_url(std::string(absl::StripAsciiWhitespace(fields[0])));
  absl::StatusOr<double> importance =
      ParseNumber(absl::StripAsciiWhitespace(fields[1]), "importance");
  if (!importance.ok()) return importance.status();
  spec.set_importance(*importance);
  for (size_t i = 2; i < fields.size(); ++i) {
    const absl::string_view text = absl::StripAsciiWhitespace(fields[i]);
    if (text.empty()) continue;
    absl::StatusOr<double> value = ParseNumber(text, kPriorNames[i - 2]);
    if (!value.ok()) return value.status();
    ChangeModel* prior = spec.mutable_prior();
    if (i == 2) prior->set_change_rate(*value);
    if (i == 3) prior->set_recall(*value);
    if (i == 4) prior->set_false_rate(*value);
  }
  return spec;
}

absl::StatusOr<UrlSpec> FromJson(absl::string_view line) {
  UrlLine parsed;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status =
      google::protobuf::util::JsonStringToMessage(std::string(line), &parsed, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("JSON: ", status.ToString()));
  }
  if (!parsed.has_importance()) {
    return absl::InvalidArgumentError("importance: missing");
  }
  UrlSpec spec;
  spec.set_url(parsed.url());
  spec.set_importance(parsed.importance());
  spec.set_politeness_host(parsed.politeness_host());
  if (parsed.has_change_rate()) {
    spec.mutable_prior()->set_change_rate(parsed.change_rate());
  }
  if (parsed.has_recall()) spec.mutable_prior()->set_recall(parsed.recall());
  if (parsed.has_false_rate()) {
    spec.mutable_prior()->set_false_rate(parsed.false_rate());
  }
  return spec;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SplitCsvLine(absl::string_view line) {
  std::vector<std::string> fields(1);
  size_t i = 0;
  while (i < line.size()) {
    const char c = line[i];
    if (c == ',') {
      fields.emplace_back();
      ++i;
    } else if (c == '"' && absl::StripAsciiWhitespace(fields.back()).empty()) {
      fields.back().clear();
      ++i;
      for (;;) {
        if (i >= line.size()) {
          return absl::InvalidArgumentError(
              absl::StrCat("field ", fields.size(), ": unterminated quote"));
        }
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            fields.back() += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        fields.back() += line[i++];
      }
      while (i < line.size() && absl::ascii_isspace(line[i])) ++i;
      if (i < line.size() && line[i] != ',') {
        return absl::InvalidArgumentError(
            absl::StrCat("field ", fields.size(), ": text after the closing quote"));
      }
    } else {
      fields.back() += c;
      ++i;
    }
  }
  return fields;
}

absl::StatusOr<std::optional<UrlSpec>> ParseUrlLine(absl::string_view line, bool first_line) {
  const absl::string_view text = absl::StripAsciiWhitespace(line);
  if (text.empty() || text[0] == '#') return std::nullopt;
  if (text[0] == '{') {
    absl::StatusOr<UrlSpec> spec = FromJson(text);
    if (!spec.ok()) return spec.status();
    return *std::move(spec);
  }
  absl::StatusOr<std::vector<std::string>> fields = SplitCsvLine(text);
  if (!fields.ok()) return fields.status();
  if (first_line && absl::AsciiStrToLower(absl::StripAsciiWhitespace((*fields)[0])) == "url") {
    return std::nullopt;
  }
  absl::StatusOr<UrlSpec> spec = FromCsv(*fields);
  if (!spec.ok()) return spec.status();
  return *std::move(spec);
}

}  // namespace client
}  // namespace recrawl
