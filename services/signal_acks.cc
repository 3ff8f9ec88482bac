#include "services/signal_acks.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cluster/batch_result.h"

namespace recrawl {
namespace services {

std::shared_ptr<OrderedSignalAcks::Batch> OrderedSignalAcks::Add(SignalBatchAck ack, int parts) {
  auto batch = std::make_shared<Batch>();
  batch->ack = std::move(ack);
  batch->outstanding = parts;
  absl::MutexLock lock(&mu_);
  order_.push_back(batch);
  Flush();
  return batch;
}

void OrderedSignalAcks::PartDone(const std::shared_ptr<Batch>& batch, int shard,
                                 const std::vector<int>& indexes, const grpc::Status& status,
                                 const SignalBatchAck& part_ack) {
  absl::MutexLock lock(&mu_);
  SignalBatchAck& out = batch->ack;
  if (status.ok()) {
    cluster::MergeResult(part_ack.result(), indexes, out.mutable_result());
    out.set_counted(out.counted() + part_ack.counted());
    out.set_registered(out.registered() + part_ack.registered());
    out.set_duplicate(out.duplicate() + part_ack.duplicate());
    out.set_stale(out.stale() + part_ack.stale());
    out.set_unknown(out.unknown() + part_ack.unknown());
    for (uint32_t k : part_ack.unknown_indexes()) {
      if (k < indexes.size()) out.add_unknown_indexes(static_cast<uint32_t>(indexes[k]));
    }
  } else {
    const absl::Status lost(static_cast<absl::StatusCode>(status.error_code()),
                            absl::StrCat("shard ", shard, ": ", status.error_message()));
    for (int i : indexes) cluster::AddRejection(i, lost, out.mutable_result());
  }
  --batch->outstanding;
  Flush();
}

void OrderedSignalAcks::AwaitDrained() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &OrderedSignalAcks::Drained));
}

void OrderedSignalAcks::Flush() {
  while (!order_.empty() && order_.front()->outstanding == 0) {
    SignalBatchAck& ack = order_.front()->ack;
    cluster::SortRejected(ack.mutable_result());
    std::sort(ack.mutable_unknown_indexes()->begin(), ack.mutable_unknown_indexes()->end());
    if (open_) open_ = write_(ack);
    order_.pop_front();
  }
}

}  // namespace services
}  // namespace recrawl
