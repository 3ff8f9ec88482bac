// The crawl policy between its wire form (proto Policy) and policy::.
#ifndef RECRAWL_SHARD_POLICY_PROTO_H_
#define RECRAWL_SHARD_POLICY_PROTO_H_

#include "absl/status/statusor.h"
#include "policy/crawl_policy.h"
#include "proto/common.pb.h"

namespace recrawl {
namespace shard {

// InvalidArgument for UNSPECIFIED, an unknown kind, or APPROX without
// 1 <= approx_terms <= max_approx_terms.
absl::StatusOr<policy::CrawlPolicy> PolicyFromProto(const Policy& policy, int max_approx_terms);
Policy PolicyToProto(const policy::CrawlPolicy& policy);

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_POLICY_PROTO_H_
