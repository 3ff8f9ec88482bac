// The learning state of a URL (learning.h) as stored in its record.
#ifndef RECRAWL_SHARD_LEARNING_RECORD_H_
#define RECRAWL_SHARD_LEARNING_RECORD_H_

#include "shard/learning.h"
#include "shard/store/records.pb.h"

namespace recrawl {
namespace shard {

// Sets every field of `out` (so that, as a patch, it replaces all of them).
void LearningToRecord(const LearningState& state, LearningRecord* out);

// The state from a record's learning fields and prior (Δ₀, λ₀, ν₀).
LearningState LearningFromRecord(const LearningRecord& record, const policy::PageParams& prior);

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_LEARNING_RECORD_H_
