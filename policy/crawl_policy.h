// The discrete crawl policies of the main paper (Sec. 5.1, App. A.1), each a
// choice of crawl value V. They differ in what they believe about a page:
// GREEDY ignores signals, GREEDY-CIS trusts every signal, GREEDY-NCIS uses
// the full noisy-signal model, and G-NCIS-APPROX-J cuts V after J terms.
#ifndef RECRAWL_POLICY_CRAWL_POLICY_H_
#define RECRAWL_POLICY_CRAWL_POLICY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/page_model.h"

namespace recrawl {
namespace policy {

enum class PolicyKind {
  kGreedy,      // V_GREEDY: no signals
  kGreedyCis,   // V_GREEDY-CIS: signals assumed noiseless (ν = 0)
  kGreedyNcis,  // V_GREEDY-NCIS: exact noisy-signal value
  kApprox,      // V_G-NCIS-APPROX-J: first J terms of the NCIS sum
};

struct CrawlPolicy {
  PolicyKind kind = PolicyKind::kGreedyNcis;
  int approx_terms = 0;  // J, only for kApprox (J >= 1)

  static CrawlPolicy Greedy() { return {PolicyKind::kGreedy, 0}; }
  static CrawlPolicy GreedyCis() { return {PolicyKind::kGreedyCis, 0}; }
  static CrawlPolicy GreedyNcis() { return {PolicyKind::kGreedyNcis, 0}; }
  static CrawlPolicy Approx(int terms) { return {PolicyKind::kApprox, terms}; }

  // Accepts "greedy", "greedy_cis", "greedy_ncis", "approxJ" / "approx_J"
  // (J >= 1), case-insensitively, with '-' allowed for '_'.
  static absl::StatusOr<CrawlPolicy> Parse(absl::string_view name);
  // "greedy", "greedy_cis", "greedy_ncis" or "approxJ".
  std::string Name() const;

  // The page as this policy models it: signals dropped for GREEDY, false
  // signals dropped for GREEDY-CIS, unchanged otherwise.
  PageModel Belief(const PageModel& page) const;
  // Terms of the NCIS sum the policy evaluates; 0 means all (exact).
  int MaxTerms() const { return kind == PolicyKind::kApprox ? approx_terms : 0; }

  bool operator==(const CrawlPolicy& o) const {
    return kind == o.kind && approx_terms == o.approx_terms;
  }
};

}  // namespace policy
}  // namespace recrawl

#endif  // RECRAWL_POLICY_CRAWL_POLICY_H_
