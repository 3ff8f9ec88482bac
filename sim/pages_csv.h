// Reads the page tables `recrawl_sim solve` works on: CSV with a header row,
// required columns importance,change_rate and optional recall, false_rate,
// complete_obs, in any order.
#ifndef RECRAWL_SIM_PAGES_CSV_H_
#define RECRAWL_SIM_PAGES_CSV_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/page_model.h"

namespace recrawl {
namespace sim {

struct PageRow {
  policy::PageParams params;
  bool complete_obs = false;
};

// Parses CSV text. Errors name the line and column ("line 3, column
// change_rate: ..."); values are validated as PageModel::Create does.
absl::StatusOr<std::vector<PageRow>> ParsePagesCsv(absl::string_view text);

// Reads and parses a file; NotFound if it cannot be opened.
absl::StatusOr<std::vector<PageRow>> ReadPagesCsv(const std::string& path);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_PAGES_CSV_H_
