#include "shard/lease_table.h"

namespace recrawl {
namespace shard {

void LeaseTable::Grant(uint64_t id, PageId page, std::string holder, double deadline, bool active) {
  Release(page);
  Lease& lease = by_id_[id];
  lease.id = id;
  lease.page = page;
  lease.holder = std::move(holder);
  lease.deadline = deadline;
  lease.active = active;
  by_page_[page] = id;
  if (active) deadlines_.insert({deadline, id});
}

const LeaseTable::Lease* LeaseTable::Find(uint64_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &it->second;
}

const LeaseTable::Lease* LeaseTable::OfPage(PageId page) const {
  auto it = by_page_.find(page);
  return it == by_page_.end() ? nullptr : Find(it->second);
}

bool LeaseTable::Release(PageId page) {
  auto it = by_page_.find(page);
  if (it == by_page_.end()) return false;
  auto lease = by_id_.find(it->second);
  bool was_active = false;
  if (lease != by_id_.end()) {
    was_active = lease->second.active;
    if (was_active) deadlines_.erase({lease->second.deadline, lease->first});
    by_id_.erase(lease);
  }
  by_page_.erase(it);
  return was_active;
}

void LeaseTable::Expire(double now, std::vector<PageId>* pages) {
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    Lease& lease = by_id_[deadlines_.begin()->second];
    lease.active = false;
    pages->push_back(lease.page);
    deadlines_.erase(deadlines_.begin());
  }
}

void LeaseTable::Hold(PageId page, double until) {
  Unhold(page);
  holds_[page] = until;
  hold_ends_.insert({until, page});
}

bool LeaseTable::Held(PageId page, double* until) const {
  auto it = holds_.find(page);
  if (it == holds_.end()) return false;
  if (until != nullptr) *until = it->second;
  return true;
}

bool LeaseTable::Unhold(PageId page) {
  auto it = holds_.find(page);
  if (it == holds_.end()) return false;
  hold_ends_.erase({it->second, page});
  holds_.erase(it);
  return true;
}

void LeaseTable::ExpireHolds(double now, std::vector<PageId>* pages) {
  while (!hold_ends_.empty() && hold_ends_.begin()->first <= now) {
    const PageId page = hold_ends_.begin()->second;
    holds_.erase(page);
    hold_ends_.erase(hold_ends_.begin());
    pages->push_back(page);
  }
}

}  // namespace shard
}  // namespace recrawl
