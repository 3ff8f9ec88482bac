#include "coordinator/lease_rounds.h"

#include <algorithm>
#include <utility>

namespace recrawl {
namespace coordinator {
namespace {

// Merge mode, one round: the slots of each shard; those past the merge's
// exact prefix go to *unassigned. A shard whose peek fails is out of *live.
std::vector<std::vector<double>> MergeRound(const std::vector<double>& slots, int round,
                                            std::vector<bool>* live, Coordinator* core,
                                            absl::Mutex* core_mu, LeaseShards* shards,
                                            std::vector<double>* unassigned) {
  const int num_shards = static_cast<int>(live->size());
  const int n = static_cast<int>(slots.size());
  std::vector<int> asked(num_shards, 0);
  if (round == 0) {
    absl::MutexLock lock(core_mu);
    asked = core->PeekSizes(n, *live);
  } else {
    // A later round asks for everything it could win: it stays exact.
    for (int s = 0; s < num_shards; ++s) asked[s] = (*live)[s] ? n : 0;
  }
  std::vector<std::optional<std::vector<double>>> answers = shards->Peek(slots.front(), asked);
  std::vector<std::vector<double>> peeked(num_shards);
  for (int s = 0; s < num_shards; ++s) {
    if (asked[s] == 0) continue;
    if (!answers[s].has_value()) {
      (*live)[s] = false;
      asked[s] = 0;
      continue;
    }
    peeked[s] = std::move(*answers[s]);
  }
  size_t assigned = 0;
  std::vector<std::vector<double>> by_shard;
  {
    absl::MutexLock lock(core_mu);
    by_shard = core->MergeSlots(slots, peeked, asked, &assigned);
  }
  unassigned->assign(slots.begin() + static_cast<std::ptrdiff_t>(assigned), slots.end());
  return by_shard;
}

// Split modes after round 0: round robin over the shards that answered (the
// dealer's budgets follow at the next liveness change).
std::vector<std::vector<double>> RoundRobin(const std::vector<double>& slots,
                                            const std::vector<bool>& live) {
  std::vector<std::vector<double>> by_shard(live.size());
  std::vector<int> ok;
  for (size_t s = 0; s < live.size(); ++s) {
    if (live[s]) ok.push_back(static_cast<int>(s));
  }
  if (ok.empty()) return by_shard;
  for (size_t j = 0; j < slots.size(); ++j) by_shard[ok[j % ok.size()]].push_back(slots[j]);
  return by_shard;
}

}  // namespace

LeaseRoundsResult RunLeaseRounds(std::vector<double> slots, Mode mode, std::vector<bool> live,
                                 Coordinator* core, absl::Mutex* core_mu, LeaseShards* shards) {
  const int num_shards = static_cast<int>(live.size());
  LeaseRoundsResult result;
  if (slots.empty()) return result;
  for (int s = 0; s < num_shards; ++s) {
    if (live[s] && !shards->DeliverHeld(s)) live[s] = false;
  }
  for (int round = 0; round < kLeaseRounds && !slots.empty(); ++round) {
    if (std::none_of(live.begin(), live.end(), [](bool l) { return l; })) break;
    std::vector<std::vector<double>> by_shard;
    std::vector<double> leftover;
    if (mode == Mode::kMerge) {
      by_shard = MergeRound(slots, round, &live, core, core_mu, shards, &leftover);
    } else if (round == 0) {
      absl::MutexLock lock(core_mu);
      by_shard = core->DealSlots(slots);
    } else {
      by_shard = RoundRobin(slots, live);
    }
    // A shard that is out (its held reports not delivered, or a failed
    // peek) leases nothing; its slots go to the next round.
    bool any = false;
    for (int s = 0; s < num_shards; ++s) {
      if (!live[s]) {
        leftover.insert(leftover.end(), by_shard[s].begin(), by_shard[s].end());
        by_shard[s].clear();
      }
      any = any || !by_shard[s].empty();
    }
    if (any) {
      ++result.rounds;
      std::vector<std::optional<std::vector<double>>> granted = shards->Lease(by_shard);
      for (int s = 0; s < num_shards; ++s) {
        if (by_shard[s].empty()) continue;
        if (!granted[s].has_value()) {
          live[s] = false;
          leftover.insert(leftover.end(), by_shard[s].begin(), by_shard[s].end());
          continue;
        }
        absl::MutexLock lock(core_mu);
        core->RecordLeases(s, *granted[s]);
      }
    }
    std::sort(leftover.begin(), leftover.end());
    slots = std::move(leftover);
  }
  result.unfilled_slots = slots.size();
  return result;
}

}  // namespace coordinator
}  // namespace recrawl
