#include "bench/index_work_report.h"

#include <cstdio>

namespace recrawl {
namespace bench {

void PrintIndexWorkPerLease(const IndexWork& now, double leased, IndexWork* since) {
  const double per = leased > 0 ? 1.0 / leased : 0.0;
  std::printf(
      "  index: %.2f valuations, %.3f wake-ups and %.3f host waits a lease; %llu "
      "rebuilds, %llu raises, %llu reserve pulls (%llu candidates)\n",
      (now.valuations() - since->valuations()) * per, (now.wakeups() - since->wakeups()) * per,
      (now.host_waits() - since->host_waits()) * per,
      static_cast<unsigned long long>(now.rebuilds() - since->rebuilds()),
      static_cast<unsigned long long>(now.raises() - since->raises()),
      static_cast<unsigned long long>(now.reserve_pulls() - since->reserve_pulls()),
      static_cast<unsigned long long>(now.candidates()));
  *since = now;
}

}  // namespace bench
}  // namespace recrawl
