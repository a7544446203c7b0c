#include "sys/route.h"

#include <gtest/gtest.h>

namespace rnvme {
namespace {

// Loopback exists in every network namespace, so these hold on any build machine.
TEST(RealNetProbe, LoopbackRoute) {
  RealNetProbe net;
  auto src = net.source_for("127.0.0.1");
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_EQ(*src, "127.0.0.1");
  EXPECT_TRUE(net.is_local("127.0.0.1"));
  EXPECT_FALSE(net.is_local("192.0.2.254"));  // TEST-NET-1, never configured here
  EXPECT_FALSE(net.is_local("not-an-address"));
  EXPECT_FALSE(net.source_for("not-an-address").ok());
}

}  // namespace
}  // namespace rnvme
