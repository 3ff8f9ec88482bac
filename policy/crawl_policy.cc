#include "policy/crawl_policy.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"

namespace recrawl {
namespace policy {

absl::StatusOr<CrawlPolicy> CrawlPolicy::Parse(absl::string_view name) {
  std::string s = absl::StrReplaceAll(absl::AsciiStrToLower(name), {{"-", "_"}});
  if (s == "greedy") return Greedy();
  if (s == "greedy_cis") return GreedyCis();
  if (s == "greedy_ncis") return GreedyNcis();
  absl::string_view rest = s;
  if (absl::ConsumePrefix(&rest, "approx") || absl::ConsumePrefix(&rest, "g_ncis_approx")) {
    absl::ConsumePrefix(&rest, "_");
    int terms = 0;
    if (absl::SimpleAtoi(rest, &terms) && terms >= 1) return Approx(terms);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("policy must be one of greedy, greedy_cis, greedy_ncis, approxJ (J >= 1); "
                   "got '",
                   name, "'"));
}

std::string CrawlPolicy::Name() const {
  switch (kind) {
    case PolicyKind::kGreedy:
      return "greedy";
    case PolicyKind::kGreedyCis:
      return "greedy_cis";
    case PolicyKind::kGreedyNcis:
      return "greedy_ncis";
    case PolicyKind::kApprox:
      return absl::StrCat("approx", approx_terms);
  }
  return "unknown";
}

PageModel CrawlPolicy::Belief(const PageModel& page) const {
  switch (kind) {
    case PolicyKind::kGreedy:
      return page.WithoutSignals();
    case PolicyKind::kGreedyCis:
      return page.WithoutFalseSignals();
    case PolicyKind::kGreedyNcis:
    case PolicyKind::kApprox:
      return page;
  }
  return page;
}

}  // namespace policy
}  // namespace recrawl
