// Which network addresses an outbound fetch may connect to (the SSRF guard
// of ingest/safe_fetch.h): public unicast addresses only, unless an
// allowlist admits the address.
//
// Refused: IPv4 0/8 ("this network", incl. 0.0.0.0), 10/8, 100.64/10
// (carrier-grade NAT), 127/8, 169.254/16, 172.16/12, 192.0.0/24,
// 192.168/16, 198.18/15, 224/4 (multicast) and 240/4 (reserved, incl.
// 255.255.255.255); IPv6 :: and ::1, fc00::/7 (unique local), fe80::/10
// (link local), fec0::/10 (old site local) and ff00::/8 (multicast). IPv6
// addresses that carry an IPv4 address (::ffff:0:0/96 mapped, ::/96
// compatible, 64:ff9b::/96 NAT64, 2002::/16 6to4) are judged by that IPv4
// address.
//
// Pure; thread-safe (immutable after construction).
#ifndef RECRAWL_INGEST_ADDRESS_POLICY_H_
#define RECRAWL_INGEST_ADDRESS_POLICY_H_

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace recrawl {
namespace ingest {

// An IPv4 or IPv6 address; IPv4 addresses are stored as ::ffff:a.b.c.d.
struct IpAddress {
  std::array<uint8_t, 16> bytes{};

  // From text ("127.0.0.1", "::1"); INVALID_ARGUMENT otherwise.
  static absl::StatusOr<IpAddress> Parse(absl::string_view text);
  // From a socket address (AF_INET or AF_INET6); false for other families.
  static bool FromSockaddr(const sockaddr* address, IpAddress* out);
  std::string ToString() const;
};

// A network prefix, "10.0.0.0/8" or "fc00::/7" (IPv4 prefixes match IPv4
// addresses, including IPv4-mapped IPv6 ones).
struct Network {
  IpAddress base;
  int prefix_bits = 0;  // over the 128-bit form

  // INVALID_ARGUMENT naming the text when it is not address/bits.
  static absl::StatusOr<Network> Parse(absl::string_view text);
  bool Contains(const IpAddress& address) const;
};

class AddressPolicy {
 public:
  // Refuses every non-public address.
  AddressPolicy() = default;
  // Also admits the addresses of `allowed` (e.g. 127.0.0.0/8 and ::1/128
  // for tests that fetch from a local server).
  explicit AddressPolicy(std::vector<Network> allowed) : allowed_(std::move(allowed)) {}
  // The policy that admits loopback (127.0.0.0/8, ::1/128).
  static AddressPolicy AllowingLoopback();

  // True when a fetch may connect to `address`.
  bool Allows(const IpAddress& address) const;

  // True when `address` is one of the refused ranges of the file comment.
  static bool IsNonPublic(const IpAddress& address);

 private:
  std::vector<Network> allowed_;
};

}  // namespace ingest
}  // namespace recrawl

#endif  // RECRAWL_INGEST_ADDRESS_POLICY_H_
