#include "coordinator/slot_dealer.h"

#include <cstddef>

namespace recrawl {
namespace coordinator {

void SlotDealer::SetBudgets(const std::vector<double>& budgets) {
  double total = 0.0;
  for (double b : budgets) total += b > 0.0 ? b : 0.0;
  share_.assign(credit_.size(), 0.0);
  for (size_t s = 0; s < credit_.size() && s < budgets.size(); ++s) {
    if (total > 0.0 && budgets[s] > 0.0) share_[s] = budgets[s] / total;
  }
  for (size_t s = 0; s < credit_.size(); ++s) {
    if (share_[s] == 0.0) credit_[s] = 0.0;
  }
}

int SlotDealer::Deal() {
  int chosen = -1;
  for (size_t s = 0; s < credit_.size(); ++s) {
    if (share_.empty() || share_[s] == 0.0) continue;
    credit_[s] += share_[s];
    if (chosen < 0 || credit_[s] > credit_[chosen]) chosen = static_cast<int>(s);
  }
  if (chosen >= 0) credit_[chosen] -= 1.0;
  return chosen;
}

}  // namespace coordinator
}  // namespace recrawl
