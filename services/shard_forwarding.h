// What the coordinator owes its shards and sends them when they answer:
// crawl reports it acknowledged while their shard was out or slow
// (coordinator::HeldReports), and releases of leases granted that no
// fetcher got (coordinator::LeaseReleases). This class performs the
// deliveries over gRPC; the bookkeeping is the two pure classes'.
//
// Before a shard is leased from, what it is owed goes first
// (DeliverBeforeLeasing; coordinator/lease_rounds.h states the rule); the
// health probes deliver to every live shard (DeliverAll).
//
// Thread-safe. Deliveries of held reports run one at a time, so a caller
// that finds a batch on its way waits for its outcome.
#ifndef RECRAWL_SERVICES_SHARD_FORWARDING_H_
#define RECRAWL_SERVICES_SHARD_FORWARDING_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/held_reports.h"
#include "coordinator/lease_releases.h"
#include "proto/coordinator.pb.h"
#include "services/coordinator_shards.h"

namespace recrawl {
namespace services {

class ShardForwarding {
 public:
  struct Options {
    int num_shards = 1;
    // Reports held over all shards.
    size_t max_held_reports = 1000000;
    // Items per delivery call.
    size_t max_batch_items = 10000;
    // Real seconds a delivery call may take.
    double call_deadline = 5.0;
  };
  // The address of `shard` when it is live; an error when it is out.
  using LiveAddress = std::function<absl::StatusOr<std::string>(int shard)>;

  // `channels` must outlive this.
  ShardForwarding(ShardChannels* channels, LiveAddress live_address, const Options& options);

  // Holds `report` (with the shard's own lease id) for `shard`; false when
  // the capacity is full.
  bool Hold(int shard, const CrawlReport& report) ABSL_LOCKS_EXCLUDED(mu_);
  // A Lease call to `shard` with this request id got no usable answer.
  void Abandon(int shard, uint64_t request_id) ABSL_LOCKS_EXCLUDED(mu_);
  // The fetcher did not get `leases` (cluster lease ids): their shards
  // release them.
  void Undelivered(const std::vector<CoordinatorLease>& leases) ABSL_LOCKS_EXCLUDED(mu_);

  // Sends `shard` its lease releases and held reports. True when none of
  // its reports is held any more (the shard may be leased from).
  bool DeliverBeforeLeasing(int shard) ABSL_LOCKS_EXCLUDED(mu_, deliver_mu_);
  // Sends `shard` its held reports, then its lease releases.
  void DeliverAll(int shard) ABSL_LOCKS_EXCLUDED(mu_, deliver_mu_);

  // Reports held or on their way (none applied at its shard yet).
  size_t pending_reports() const ABSL_LOCKS_EXCLUDED(mu_);
  coordinator::LeaseReleases::Stats release_stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void DeliverReports(int shard) ABSL_LOCKS_EXCLUDED(mu_, deliver_mu_);
  void DeliverReleases(int shard) ABSL_LOCKS_EXCLUDED(mu_);

  ShardChannels* const channels_;
  const LiveAddress live_address_;
  const Options options_;
  // One delivery of held reports at a time (taken before mu_).
  absl::Mutex deliver_mu_;
  mutable absl::Mutex mu_;
  coordinator::HeldReports held_ ABSL_GUARDED_BY(mu_);
  coordinator::LeaseReleases releases_ ABSL_GUARDED_BY(mu_);
};

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_SHARD_FORWARDING_H_
