// glibc malloc settings for a process that runs a shard.
//
// By default glibc raises its mmap threshold to the size of the largest
// mmapped block freed so far (up to 32 MiB) and its trim threshold to twice
// that. A shard frees such blocks early (its tables' growth at start-up,
// the start-up scan's 4 MiB read-ahead buffers), so afterwards the free top
// of every thread's arena may stay resident up to tens of MiB, and
// malloc_trim does not trim the top of an arena other than the main one.
// The start-up scan's threads exit with their arenas' tops free: 7-12 MB
// more resident at 10^6 URLs (~12 B/URL of a 200 B/URL budget), the reason
// ShardOptions::startup_threads was 0. A fixed threshold turns the dynamic
// adjustment off: blocks of 1 MiB and more are mmapped and unmapped when
// freed, and arenas are trimmed above the default 128 KiB.
#ifndef RECRAWL_SHARD_MALLOC_OPTIONS_H_
#define RECRAWL_SHARD_MALLOC_OPTIONS_H_

#include <malloc.h>

namespace recrawl {
namespace shard {

// Call at the start of main(), before any thread starts. Process-wide, so
// binaries do it, not the library.
inline void SetShardMallocOptions() { mallopt(M_MMAP_THRESHOLD, 1 << 20); }

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_MALLOC_OPTIONS_H_
