#include "core/rdma.h"

#include <gtest/gtest.h>

namespace rnvme {
namespace {

TEST(Rdma, GidForAddress) {
  EXPECT_EQ(gid_for_address("192.168.50.1"), "0000:0000:0000:0000:0000:ffff:c0a8:3201");
  EXPECT_EQ(gid_for_address("fe80::1"), "fe80:0000:0000:0000:0000:0000:0000:0001");
  EXPECT_EQ(gid_for_address("eth0"), std::nullopt);
}

TEST(Rdma, GidAddressIsWhatAdminsLookFor) {
  EXPECT_EQ(gid_address("0000:0000:0000:0000:0000:ffff:c0a8:3201"), "192.168.50.1");
  EXPECT_EQ(gid_address("0000:0000:0000:0000:0000:ffff:c0a8:3201\n"), "192.168.50.1");
  EXPECT_EQ(gid_address("fe80:0000:0000:0000:5054:00ff:fe12:3456"), "fe80::5054:ff:fe12:3456");
  EXPECT_EQ(gid_address("2001:0DB8:0000:0000:0000:0000:0000:0001"), "2001:db8::1");
  EXPECT_EQ(gid_address("fe80::1"), std::nullopt);
  EXPECT_EQ(gid_address("fe80:0000:0000:0000:5054:00ff:fe12:345g"), std::nullopt);
  EXPECT_EQ(gid_address("fe80-0000:0000:0000:5054:00ff:fe12:3456"), std::nullopt);
  // round trip with the other direction
  EXPECT_EQ(gid_address(*gid_for_address("10.1.2.3")), "10.1.2.3");
  EXPECT_EQ(gid_address(*gid_for_address("fd00::42")), "fd00::42");
}

TEST(Rdma, GidTypeNamesAsShowGidsHasThem) {
  EXPECT_EQ(gid_type_name("IB/RoCE v1", "Ethernet"), "RoCE v1");
  EXPECT_EQ(gid_type_name("RoCE v2", "Ethernet"), "RoCE v2");
  EXPECT_EQ(gid_type_name("IB/RoCE v1", "InfiniBand"), "IB");
  EXPECT_EQ(gid_type_name("", "InfiniBand"), "IB");
  EXPECT_EQ(gid_type_name("IB/RoCE v1", ""), "IB/RoCE v1");  // link layer unknown
  EXPECT_EQ(gid_type_name("", "Ethernet"), "");
}

TEST(Rdma, SysfsParsing) {
  EXPECT_EQ(strip_state_prefix("4: ACTIVE\n"), "ACTIVE");
  EXPECT_EQ(strip_state_prefix("5: LinkUp"), "LinkUp");
  EXPECT_TRUE(is_zero_gid("0000:0000:0000:0000:0000:0000:0000:0000\n"));
  EXPECT_FALSE(is_zero_gid("fe80:0000:0000:0000:0000:0000:0000:0001"));
}

TEST(Rdma, FindGidPrefersRoceV2) {
  std::vector<RdmaDevice> devs(1);
  devs[0].name = "rxe0";
  devs[0].ports.resize(1);
  auto& p = devs[0].ports[0];
  const std::string g = *gid_for_address("10.1.1.1");
  p.gids = {{0, g, "IB/RoCE v1", "eth0"}, {1, g, "RoCE v2", "eth0"}};
  auto m = find_gid(devs, "10.1.1.1");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->gid->index, 1);
  p.gids.pop_back();
  m = find_gid(devs, "10.1.1.1");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->gid->type, "IB/RoCE v1");
  EXPECT_FALSE(find_gid(devs, "10.1.1.2"));
}

TEST(Rdma, RoceMtuForNetdevMtu) {
  EXPECT_EQ(roce_mtu_for_netdev_mtu(1500), 1024);
  EXPECT_EQ(roce_mtu_for_netdev_mtu(4200), 4096);
  EXPECT_EQ(roce_mtu_for_netdev_mtu(4100), 2048);
  EXPECT_EQ(roce_mtu_for_netdev_mtu(9000), 4096);
  EXPECT_EQ(roce_mtu_for_netdev_mtu(100), 0);
}

}  // namespace
}  // namespace rnvme
