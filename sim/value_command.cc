#include "sim/value_command.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "policy/crawl_policy.h"
#include "policy/crawl_value.h"
#include "policy/page_model.h"

namespace recrawl {
namespace sim {

absl::Status RunValue(const ValueOptions& options, std::ostream& out) {
  absl::StatusOr<policy::CrawlPolicy> crawl_policy = policy::CrawlPolicy::Parse(options.policy);
  if (!crawl_policy.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--", crawl_policy.status().message()));
  }
  absl::StatusOr<policy::PageModel> page = policy::PageModel::Create(
      {options.importance, options.change_rate, options.recall, options.false_rate});
  if (!page.ok()) {
    // PageModel names the field exactly as the flag is named.
    return absl::InvalidArgumentError(absl::StrCat("--", page.status().message()));
  }
  if (!(options.tau >= 0.0) || std::isinf(options.tau)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tau must be a finite number >= 0, got ", options.tau));
  }
  if (options.cis_count < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cis_count must be >= 0, got ", options.cis_count));
  }
  const double value = policy::CrawlValue(*crawl_policy, *page, options.tau, options.cis_count);
  out << absl::StrFormat("%.17g\n", value);
  return absl::OkStatus();
}

}  // namespace sim
}  // namespace recrawl
