// W3C datetimes (https://www.w3.org/TR/NOTE-datetime), the format of a
// sitemap's <lastmod> and of Atom's dates:
//
//   YYYY | YYYY-MM | YYYY-MM-DD | YYYY-MM-DDThh:mm<TZD> |
//   YYYY-MM-DDThh:mm:ss<TZD> | YYYY-MM-DDThh:mm:ss.s<TZD>
//
// where <TZD> is "Z", "+hh:mm" or "-hh:mm" and the fraction has one or more
// digits (kept to the nanosecond). As sites write them, "+hhmm" and a
// missing <TZD> (taken as UTC) are accepted too. A date without a time is
// its first instant in UTC (a year is its 1 January, a month its 1st).
//
// Pure function; thread-safe.
#ifndef RECRAWL_INGEST_FEEDS_W3C_DATETIME_H_
#define RECRAWL_INGEST_FEEDS_W3C_DATETIME_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace recrawl {
namespace feeds {

// The instant `text` names (surrounding whitespace ignored).
// INVALID_ARGUMENT, quoting `text`, when it is not of the forms above or
// names no real date or time (month 13, 30 February, 24:00, offset > 14 h).
absl::StatusOr<absl::Time> ParseW3cDatetime(absl::string_view text);

}  // namespace feeds
}  // namespace recrawl

#endif  // RECRAWL_INGEST_FEEDS_W3C_DATETIME_H_
