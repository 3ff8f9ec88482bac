#include "ingest/feeds/w3c_datetime.h"

#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"

namespace recrawl {
namespace feeds {
namespace {

// Reads exactly `n` digits at `*pos` into `*value`.
bool Digits(absl::string_view s, size_t* pos, int n, int* value) {
  if (*pos + n > s.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[*pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *value = v;
  return true;
}

bool Take(absl::string_view s, size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

}  // namespace

absl::StatusOr<absl::Time> ParseW3cDatetime(absl::string_view text) {
  const absl::string_view s = absl::StripAsciiWhitespace(text);
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("datetime \"", absl::CHexEscape(s.substr(0, 64)), "\": ", why));
  };
  size_t pos = 0;
  int year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0;
  int64_t nanos = 0;
  if (!Digits(s, &pos, 4, &year)) return bad("must start with a 4-digit year");
  if (Take(s, &pos, '-')) {
    if (!Digits(s, &pos, 2, &month)) return bad("month must be 2 digits");
    if (Take(s, &pos, '-')) {
      if (!Digits(s, &pos, 2, &day)) return bad("day must be 2 digits");
    }
  }
  int offset_minutes = 0;
  if (Take(s, &pos, 'T')) {
    if (!Digits(s, &pos, 2, &hour) || !Take(s, &pos, ':') || !Digits(s, &pos, 2, &minute)) {
      return bad("time must be hh:mm[:ss[.s]]");
    }
    if (Take(s, &pos, ':')) {
      if (!Digits(s, &pos, 2, &second)) return bad("seconds must be 2 digits");
      if (Take(s, &pos, '.')) {
        const size_t start = pos;
        int64_t scale = 100000000;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
          nanos += (s[pos] - '0') * scale;
          scale /= 10;
          ++pos;
        }
        if (pos == start) return bad("a fraction of a second needs digits");
      }
    }
    if (Take(s, &pos, 'Z')) {
      // UTC.
    } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
      const int sign = s[pos] == '-' ? -1 : 1;
      ++pos;
      int oh = 0, om = 0;
      if (!Digits(s, &pos, 2, &oh)) return bad("time zone must be Z or +hh:mm / -hh:mm");
      Take(s, &pos, ':');
      if (!Digits(s, &pos, 2, &om)) return bad("time zone must be Z or +hh:mm / -hh:mm");
      if (oh > 14 || om > 59 || oh * 60 + om > 14 * 60) return bad("time zone offset out of range");
      offset_minutes = sign * (oh * 60 + om);
    }
  }
  if (pos != s.size()) return bad("unexpected text after the date");
  if (month < 1 || month > 12) return bad("month out of range");
  if (hour > 23 || minute > 59 || second > 59) return bad("time out of range");
  const absl::CivilSecond civil(year, month, day, hour, minute, second);
  if (civil.day() != day || day < 1) return bad("day out of range for the month");
  return absl::FromCivil(civil, absl::UTCTimeZone()) - absl::Minutes(offset_minutes) +
         absl::Nanoseconds(nanos);
}

}  // namespace feeds
}  // namespace recrawl
