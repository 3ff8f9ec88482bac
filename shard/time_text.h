// Times in messages: the shortest decimal that reads back as the same
// double, so that two different times never print the same (a %g of epoch
// seconds keeps 6 digits: 1.79569e+09).
#ifndef RECRAWL_SHARD_TIME_TEXT_H_
#define RECRAWL_SHARD_TIME_TEXT_H_

#include <charconv>
#include <string>

namespace recrawl {
namespace shard {

inline std::string TimeText(double seconds) {
  char buffer[32];
  const std::to_chars_result r = std::to_chars(buffer, buffer + sizeof(buffer), seconds);
  return std::string(buffer, r.ptr);
}

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_TIME_TEXT_H_
