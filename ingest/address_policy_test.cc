#include "ingest/address_policy.h"

#include "gtest/gtest.h"

namespace recrawl {
namespace ingest {
namespace {

bool Refused(const char* text, const AddressPolicy& policy = AddressPolicy()) {
  absl::StatusOr<IpAddress> a = IpAddress::Parse(text);
  EXPECT_TRUE(a.ok()) << text;
  return !policy.Allows(*a);
}

TEST(AddressPolicyTest, RefusesNonPublicIpv4) {
  for (const char* a :
       {"0.0.0.0", "0.1.2.3", "10.1.2.3", "100.64.0.1", "100.127.255.255", "127.0.0.1",
        "127.255.0.9", "169.254.169.254", "172.16.0.1", "172.31.255.255", "192.0.0.8",
        "192.168.1.1", "198.18.0.1", "224.0.0.1", "240.0.0.1", "255.255.255.255"}) {
    EXPECT_TRUE(Refused(a)) << a;
  }
}

TEST(AddressPolicyTest, RefusesNonPublicIpv6AndEmbeddedIpv4) {
  for (const char* a : {"::", "::1", "fc00::1", "fd12:3456::1", "fe80::1", "febf::1", "fec0::1",
                        "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.1.1",
                        "::127.0.0.1", "64:ff9b::a9fe:a9fe", "2002:c0a8:0101::1"}) {
    EXPECT_TRUE(Refused(a)) << a;
  }
}

TEST(AddressPolicyTest, AdmitsPublicAddresses) {
  for (const char* a : {"8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0", "172.32.0.1",
                        "169.253.255.255", "2001:4860:4860::8888", "::ffff:8.8.8.8",
                        "64:ff9b::808:808", "2002:0808:0808::1", "fbff::1", "fe00::1"}) {
    EXPECT_FALSE(Refused(a)) << a;
  }
}

TEST(AddressPolicyTest, AllowlistAdmitsOnlyItsNetworks) {
  const AddressPolicy loopback = AddressPolicy::AllowingLoopback();
  EXPECT_FALSE(Refused("127.0.0.1", loopback));
  EXPECT_FALSE(Refused("::1", loopback));
  EXPECT_FALSE(Refused("::ffff:127.0.0.1", loopback));
  EXPECT_TRUE(Refused("10.0.0.1", loopback));
  EXPECT_TRUE(Refused("169.254.169.254", loopback));

  absl::StatusOr<Network> n = Network::Parse("10.1.0.0/16");
  ASSERT_TRUE(n.ok()) << n.status();
  const AddressPolicy ten({*n});
  EXPECT_FALSE(Refused("10.1.200.3", ten));
  EXPECT_TRUE(Refused("10.2.0.1", ten));
}

TEST(AddressPolicyTest, NetworkParseNamesTheText) {
  for (const char* bad : {"10.0.0.0", "10.0.0.0/33", "::/129", "x/8", "10.0.0.0/x"}) {
    absl::StatusOr<Network> n = Network::Parse(bad);
    ASSERT_FALSE(n.ok()) << bad;
    EXPECT_NE(n.status().message().find(bad), std::string::npos) << n.status();
  }
  EXPECT_EQ(IpAddress::Parse("::ffff:1.2.3.4")->ToString(), "1.2.3.4");
  EXPECT_EQ(IpAddress::Parse("fe80::1")->ToString(), "fe80::1");
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl
