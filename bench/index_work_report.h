// One line on what a shard's scheduling index did for a run of leases
// (ShardStats.index), for the shard benchmarks in process and over gRPC.
#ifndef RECRAWL_BENCH_INDEX_WORK_REPORT_H_
#define RECRAWL_BENCH_INDEX_WORK_REPORT_H_

#include "proto/shard.pb.h"

namespace recrawl {
namespace bench {

// Prints the work from `*since` to `now` per leased URL, then moves `*since`
// on to `now`.
void PrintIndexWorkPerLease(const IndexWork& now, double leased, IndexWork* since);

}  // namespace bench
}  // namespace recrawl

#endif  // RECRAWL_BENCH_INDEX_WORK_REPORT_H_
