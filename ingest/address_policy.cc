#include "ingest/address_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace recrawl {
namespace ingest {
namespace {

constexpr std::array<uint8_t, 12> kMappedPrefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

bool IsV4(const IpAddress& a) {
  return std::memcmp(a.bytes.data(), kMappedPrefix.data(), kMappedPrefix.size()) == 0;
}

IpAddress FromV4(const uint8_t* v4) {
  IpAddress a;
  std::memcpy(a.bytes.data(), kMappedPrefix.data(), kMappedPrefix.size());
  std::memcpy(a.bytes.data() + 12, v4, 4);
  return a;
}

// An IPv4 network "a.b.c.d/bits" in the mapped form.
Network V4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, int bits) {
  const uint8_t v4[4] = {a, b, c, d};
  return Network{FromV4(v4), 96 + bits};
}

Network V6(std::array<uint8_t, 16> bytes, int bits) { return Network{IpAddress{bytes}, bits}; }

bool IsNonPublicV4(const IpAddress& a) {
  static const Network kRefused[] = {
      V4(0, 0, 0, 0, 8),      V4(10, 0, 0, 0, 8),    V4(100, 64, 0, 0, 10), V4(127, 0, 0, 0, 8),
      V4(169, 254, 0, 0, 16), V4(172, 16, 0, 0, 12), V4(192, 0, 0, 0, 24),  V4(192, 168, 0, 0, 16),
      V4(198, 18, 0, 0, 15),  V4(224, 0, 0, 0, 4),   V4(240, 0, 0, 0, 4),
  };
  for (const Network& n : kRefused) {
    if (n.Contains(a)) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<IpAddress> IpAddress::Parse(absl::string_view text) {
  const std::string s(text);
  uint8_t v4[4];
  if (inet_pton(AF_INET, s.c_str(), v4) == 1) return FromV4(v4);
  IpAddress a;
  if (inet_pton(AF_INET6, s.c_str(), a.bytes.data()) == 1) return a;
  return absl::InvalidArgumentError(absl::StrCat("not an IP address: \"", text, "\""));
}

bool IpAddress::FromSockaddr(const sockaddr* address, IpAddress* out) {
  if (address->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    *out = FromV4(reinterpret_cast<const uint8_t*>(&in->sin_addr));
    return true;
  }
  if (address->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    std::memcpy(out->bytes.data(), &in6->sin6_addr, 16);
    return true;
  }
  return false;
}

std::string IpAddress::ToString() const {
  char text[INET6_ADDRSTRLEN];
  if (IsV4(*this)) {
    inet_ntop(AF_INET, bytes.data() + 12, text, sizeof(text));
  } else {
    inet_ntop(AF_INET6, bytes.data(), text, sizeof(text));
  }
  return text;
}

absl::StatusOr<Network> Network::Parse(absl::string_view text) {
  const size_t slash = text.find('/');
  int bits = 0;
  if (slash == absl::string_view::npos || !absl::SimpleAtoi(text.substr(slash + 1), &bits)) {
    return absl::InvalidArgumentError(
        absl::StrCat("network: must be address/bits, not \"", text, "\""));
  }
  absl::StatusOr<IpAddress> base = IpAddress::Parse(text.substr(0, slash));
  if (!base.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("network \"", text, "\": ", base.status().message()));
  }
  const bool v4 = text.substr(0, slash).find(':') == absl::string_view::npos;
  const int max_bits = v4 ? 32 : 128;
  if (bits < 0 || bits > max_bits) {
    return absl::InvalidArgumentError(
        absl::StrCat("network \"", text, "\": prefix length must be in [0, ", max_bits, "]"));
  }
  return Network{*base, v4 ? 96 + bits : bits};
}

bool Network::Contains(const IpAddress& address) const {
  const int full = prefix_bits / 8;
  if (std::memcmp(base.bytes.data(), address.bytes.data(), full) != 0) return false;
  const int rest = prefix_bits % 8;
  if (rest == 0) return true;
  const uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (base.bytes[full] & mask) == (address.bytes[full] & mask);
}

AddressPolicy AddressPolicy::AllowingLoopback() {
  return AddressPolicy(
      {V4(127, 0, 0, 0, 8), V6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128)});
}

bool AddressPolicy::Allows(const IpAddress& address) const {
  if (!IsNonPublic(address)) return true;
  for (const Network& n : allowed_) {
    if (n.Contains(address)) return true;
  }
  return false;
}

bool AddressPolicy::IsNonPublic(const IpAddress& a) {
  if (IsV4(a)) return IsNonPublicV4(a);
  const auto& b = a.bytes;
  // IPv4-compatible (::a.b.c.d, incl. :: and ::1) and NAT64 (64:ff9b::/96)
  // carry the IPv4 address in their last four bytes; 6to4 (2002::/16) in
  // bytes 2..5.
  static const Network kCompatible = V6({}, 96);
  static const Network kNat64 = V6({0, 0x64, 0xff, 0x9b}, 96);
  static const Network k6to4 = V6({0x20, 0x02}, 16);
  if (kCompatible.Contains(a) || kNat64.Contains(a)) return IsNonPublicV4(FromV4(b.data() + 12));
  if (k6to4.Contains(a)) return IsNonPublicV4(FromV4(b.data() + 2));
  static const Network kRefused[] = {
      V6({0xfc}, 7),         // unique local
      V6({0xfe, 0x80}, 10),  // link local
      V6({0xfe, 0xc0}, 10),  // site local (deprecated)
      V6({0xff}, 8),         // multicast
  };
  for (const Network& n : kRefused) {
    if (n.Contains(a)) return true;
  }
  return false;
}

}  // namespace ingest
}  // namespace recrawl
