#include "cluster/routing.h"

#include "cluster/url_id.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace cluster {
namespace {

TEST(RoutingTest, SiteRoutingKeysAHostByItsRegistrableDomain) {
  EXPECT_EQ(RoutingKey("www.example.com", Routing::kSite), "example.com");
  EXPECT_EQ(RoutingKey("num25.example.com", Routing::kSite), "example.com");
  EXPECT_EQ(RoutingKey("a.b.example.co.uk", Routing::kSite), "example.co.uk");
  // Private suffixes count: a blog is its own site.
  EXPECT_EQ(RoutingKey("foo.blogspot.com", Routing::kSite), "foo.blogspot.com");
  EXPECT_EQ(RoutingKey("www.xn--bcher-kva.de", Routing::kSite), "xn--bcher-kva.de");
  // No registrable domain: the host itself.
  EXPECT_EQ(RoutingKey("localhost", Routing::kSite), "localhost");
  EXPECT_EQ(RoutingKey("com", Routing::kSite), "com");
  EXPECT_EQ(RoutingKey("127.0.0.1", Routing::kSite), "127.0.0.1");
  EXPECT_EQ(RoutingKey("[::1]", Routing::kSite), "[::1]");
  // Host routing keys by the host.
  EXPECT_EQ(RoutingKey("www.example.com", Routing::kHost), "www.example.com");
}

TEST(RoutingTest, ASitesHostsShareAShard) {
  for (int n : {2, 3, 16, 64}) {
    EXPECT_EQ(OwnerOfHost("num25.example.com", Routing::kSite, n),
              OwnerOfHost("example.com", Routing::kSite, n));
    EXPECT_EQ(OwnerOfHost("example.com", Routing::kSite, n), ShardOfHost("example.com", n));
    EXPECT_EQ(OwnerOfHost("www.example.com", Routing::kHost, n), ShardOfHost("www.example.com", n));
  }
}

TEST(RoutingTest, NamesRoundTrip) {
  for (Routing r : {Routing::kHost, Routing::kSite}) {
    EXPECT_EQ(*ParseRouting(RoutingName(r)), r);
    EXPECT_EQ(*RoutingOfHashName(RoutingHashName(r)), r);
  }
  EXPECT_EQ(RoutingHashName(Routing::kHost), "fnv1a64-murmur-jump");
  EXPECT_FALSE(ParseRouting("domain").ok());
  EXPECT_FALSE(RoutingOfHashName("md5").ok());
}

}  // namespace
}  // namespace cluster
}  // namespace recrawl
