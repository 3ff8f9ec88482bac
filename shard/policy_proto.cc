#include "shard/policy_proto.h"

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace shard {

absl::StatusOr<policy::CrawlPolicy> PolicyFromProto(const Policy& p, int max_approx_terms) {
  switch (p.kind()) {
    case POLICY_KIND_GREEDY:
      return policy::CrawlPolicy::Greedy();
    case POLICY_KIND_GREEDY_CIS:
      return policy::CrawlPolicy::GreedyCis();
    case POLICY_KIND_GREEDY_NCIS:
      return policy::CrawlPolicy::GreedyNcis();
    case POLICY_KIND_APPROX:
      if (p.approx_terms() < 1 || p.approx_terms() > max_approx_terms) {
        return absl::InvalidArgumentError(
            absl::StrCat("policy.approx_terms: must be in [1, ", max_approx_terms,
                         "] for POLICY_KIND_APPROX, got ", p.approx_terms()));
      }
      return policy::CrawlPolicy::Approx(p.approx_terms());
    default:
      return absl::InvalidArgumentError(absl::StrCat("policy.kind: unknown value ", p.kind()));
  }
}

Policy PolicyToProto(const policy::CrawlPolicy& policy) {
  Policy p;
  switch (policy.kind) {
    case policy::PolicyKind::kGreedy:
      p.set_kind(POLICY_KIND_GREEDY);
      break;
    case policy::PolicyKind::kGreedyCis:
      p.set_kind(POLICY_KIND_GREEDY_CIS);
      break;
    case policy::PolicyKind::kGreedyNcis:
      p.set_kind(POLICY_KIND_GREEDY_NCIS);
      break;
    case policy::PolicyKind::kApprox:
      p.set_kind(POLICY_KIND_APPROX);
      p.set_approx_terms(policy.approx_terms);
      break;
  }
  return p;
}

}  // namespace shard
}  // namespace recrawl
