#include "coordinator/lease_releases.h"

#include <algorithm>
#include <utility>

namespace recrawl {
namespace coordinator {
namespace {

// Moves up to `n` ids from the front of `from` to the end of `to`.
size_t MoveFront(std::vector<uint64_t>* from, std::vector<uint64_t>* to, size_t n) {
  const size_t k = std::min(n, from->size());
  to->insert(to->end(), from->begin(), from->begin() + k);
  from->erase(from->begin(), from->begin() + k);
  return k;
}

}  // namespace

void LeaseReleases::Abandon(int shard, uint64_t request_id) {
  pending_[shard].request_ids.push_back(request_id);
  ++stats_.abandoned_requests;
  ++stats_.pending;
}

void LeaseReleases::Undelivered(int shard, const std::vector<uint64_t>& lease_ids) {
  std::vector<uint64_t>& ids = pending_[shard].lease_ids;
  ids.insert(ids.end(), lease_ids.begin(), lease_ids.end());
  stats_.undelivered_leases += lease_ids.size();
  stats_.pending += lease_ids.size();
}

LeaseReleases::Batch LeaseReleases::Take(int shard, size_t max_items) {
  Batch& from = pending_[shard];
  Batch batch;
  const size_t requests = MoveFront(&from.request_ids, &batch.request_ids, max_items);
  MoveFront(&from.lease_ids, &batch.lease_ids, max_items - requests);
  stats_.pending -= batch.size();
  return batch;
}

void LeaseReleases::Return(int shard, Batch batch) {
  Batch& to = pending_[shard];
  stats_.pending += batch.size();
  batch.request_ids.insert(batch.request_ids.end(), to.request_ids.begin(), to.request_ids.end());
  batch.lease_ids.insert(batch.lease_ids.end(), to.lease_ids.begin(), to.lease_ids.end());
  to = std::move(batch);
}

}  // namespace coordinator
}  // namespace recrawl
