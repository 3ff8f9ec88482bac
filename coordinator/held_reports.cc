#include "coordinator/held_reports.h"

#include <utility>

namespace recrawl {
namespace coordinator {

HeldReports::HeldReports(int num_shards, size_t capacity)
    : capacity_(capacity), held_(static_cast<size_t>(num_shards)) {}

bool HeldReports::Hold(int shard, const CrawlReport& report) {
  if (pending() >= capacity_) return false;
  held_[shard].push_back(report);
  ++held_total_;
  return true;
}

void HeldReports::Take(int shard, size_t max_reports, ReportCrawlsRequest* batch) {
  batch->clear_reports();
  std::deque<CrawlReport>& queue = held_[shard];
  while (!queue.empty() && static_cast<size_t>(batch->reports_size()) < max_reports) {
    *batch->add_reports() = std::move(queue.front());
    queue.pop_front();
  }
  const size_t taken = static_cast<size_t>(batch->reports_size());
  held_total_ -= taken;
  delivering_ += taken;
}

void HeldReports::Delivered(size_t count) { delivering_ -= count; }

void HeldReports::Return(int shard, ReportCrawlsRequest* batch) {
  std::deque<CrawlReport>& queue = held_[shard];
  for (int i = batch->reports_size() - 1; i >= 0; --i) {
    queue.push_front(std::move(*batch->mutable_reports(i)));
  }
  const size_t count = static_cast<size_t>(batch->reports_size());
  delivering_ -= count;
  held_total_ += count;
  batch->clear_reports();
}

}  // namespace coordinator
}  // namespace recrawl
