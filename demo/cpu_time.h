// CPU time of processes and threads, for the main job's account of where
// the CPU of a crawl goes.
#ifndef RECRAWL_DEMO_CPU_TIME_H_
#define RECRAWL_DEMO_CPU_TIME_H_

#include <sys/types.h>

namespace recrawl {
namespace demo {

// User + system CPU seconds of process `pid` so far (all its threads), from
// /proc/<pid>/stat; -1 if it cannot be read (the process is gone).
double ProcessCpuSeconds(pid_t pid);

// CPU seconds of the calling thread so far.
double ThreadCpuSeconds();

}  // namespace demo
}  // namespace recrawl

#endif  // RECRAWL_DEMO_CPU_TIME_H_
