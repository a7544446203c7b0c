#include "sys/route.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <vector>

#include "sys/nl_handles.h"

namespace rnvme {
namespace {

using nl::Msg;

void put_ip(nl_msg* m, int type, int family, const char* ip) {
  unsigned char b[16] = {};
  ASSERT_EQ(inet_pton(family, ip, b), 1) << ip;
  nla_put(m, type, family == AF_INET ? 4 : 16, b);
}

// An RTM_NEWROUTE answer to RTM_GETROUTE with RTM_F_LOOKUP_TABLE, as rt_fill_info sends it for a
// route found in table 100 (policy routing): the table is in RTA_TABLE, rtm_table says COMPAT.
Msg route_reply(int family, unsigned char type, bool with_table_attr) {
  Msg m(nlmsg_alloc_simple(RTM_NEWROUTE, 0));
  rtmsg rtm{};
  rtm.rtm_family = static_cast<unsigned char>(family);
  rtm.rtm_dst_len = family == AF_INET ? 32 : 128;
  rtm.rtm_table = with_table_attr ? RT_TABLE_COMPAT : RT_TABLE_LOCAL;
  rtm.rtm_type = type;
  rtm.rtm_flags = RTM_F_CLONED | RTM_F_LOOKUP_TABLE;
  nlmsg_append(m.get(), &rtm, sizeof rtm, NLMSG_ALIGNTO);
  if (with_table_attr) nla_put_u32(m.get(), RTA_TABLE, 100);
  if (family == AF_INET) {
    put_ip(m.get(), RTA_DST, AF_INET, "10.8.1.1");
    nla_put_u32(m.get(), RTA_OIF, 4);
    put_ip(m.get(), RTA_PREFSRC, AF_INET, "10.9.0.1");
    put_ip(m.get(), RTA_GATEWAY, AF_INET, "10.9.0.254");
    nlattr* mx = nla_nest_start(m.get(), RTA_METRICS);
    nla_put_u32(m.get(), RTAX_MTU, 1400);
    nla_nest_end(m.get(), mx);
    nla_put_u32(m.get(), RTA_UID, 0);
  } else {
    put_ip(m.get(), RTA_DST, AF_INET6, "fd11::1");
    nla_put_u32(m.get(), RTA_OIF, 1);
    put_ip(m.get(), RTA_PREFSRC, AF_INET6, "fd11::1");
    nla_put_u32(m.get(), RTA_PRIORITY, 0);
    rta_cacheinfo ci{};
    nla_put(m.get(), RTA_CACHEINFO, sizeof ci, &ci);
    nla_put_u8(m.get(), RTA_PREF, 0);
  }
  return m;
}

std::string route_ifname(int ifindex) { return ifindex == 4 ? "ens1f0np0" : ifindex == 1 ? "lo" : "?"; }

TEST(RouteReply, ParsesABuiltReply) {
  Msg m = route_reply(AF_INET, RTN_UNICAST, true);
  RouteFacts r = parse_route_reply(nlmsg_hdr(m.get()), route_ifname);
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.err, 0);
  EXPECT_EQ(r.oif, "ens1f0np0");
  EXPECT_EQ(r.src, "10.9.0.1");
  EXPECT_EQ(r.gateway, "10.9.0.254");
  EXPECT_EQ(r.mtu, 1400);
  EXPECT_EQ(r.table, 100);
  EXPECT_FALSE(r.local);
}

TEST(RouteReply, ParsesABuiltLocalIpv6Reply) {
  Msg m = route_reply(AF_INET6, RTN_LOCAL, false);
  RouteFacts r = parse_route_reply(nlmsg_hdr(m.get()), route_ifname);
  EXPECT_TRUE(r.found);
  EXPECT_TRUE(r.local);
  EXPECT_EQ(r.oif, "lo");
  EXPECT_EQ(r.src, "fd11::1");
  EXPECT_EQ(r.gateway, "");
  EXPECT_EQ(r.mtu, 0);
  EXPECT_EQ(r.table, RT_TABLE_LOCAL);  // no RTA_TABLE: rtm_table
}

TEST(RouteReply, OtherMessagesAreNoRoute) {
  Msg m(nlmsg_alloc_simple(RTM_NEWLINK, 0));
  ifinfomsg ifi{};
  nlmsg_append(m.get(), &ifi, sizeof ifi, NLMSG_ALIGNTO);
  EXPECT_FALSE(parse_route_reply(nlmsg_hdr(m.get()), route_ifname).found);
}


// Replies of a 6.18 kernel to lookup_route's request (nlmsg_seq and nlmsg_pid zeroed), on a host
// with lo (ifindex 1) and eth0 (ifindex 4: 192.0.2.2/24 via 192.0.2.1, fd00::2/64), and in
// network namespaces made to have no source address to pick.
// 198.51.100.1: the default route, rt_fill_info's RTA_PREFSRC the source ip_route_output_key took.
const std::vector<uint8_t> kV4ViaGateway = {
    0x70, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x02, 0x20, 0x00, 0x00, 0xfe, 0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x08, 0x00, 0x0f, 0x00,
    0xfe, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01, 0x00, 0xc6, 0x33, 0x64, 0x01, 0x08, 0x00, 0x04, 0x00,
    0x04, 0x00, 0x00, 0x00, 0x08, 0x00, 0x07, 0x00, 0xc0, 0x00, 0x02, 0x02, 0x08, 0x00, 0x05, 0x00,
    0xc0, 0x00, 0x02, 0x01, 0x08, 0x00, 0x19, 0x00, 0x00, 0x00, 0x00, 0x00, 0x24, 0x00, 0x0c, 0x00,
    0x02, 0x00, 0x00, 0x00, 0x00, 0x94, 0x7d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
// 127.0.0.1: RTN_LOCAL through lo; table main (254), as the kernel keeps the local table merged
// into main until a rule of its own is added (fib_unmerge).
const std::vector<uint8_t> kV4Local = {
    0x68, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x02, 0x20, 0x00, 0x00, 0xfe, 0x00, 0x00, 0x02, 0x00, 0x02, 0x00, 0x80, 0x08, 0x00, 0x0f, 0x00,
    0xfe, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01, 0x00, 0x7f, 0x00, 0x00, 0x01, 0x08, 0x00, 0x04, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x08, 0x00, 0x07, 0x00, 0x7f, 0x00, 0x00, 0x01, 0x08, 0x00, 0x19, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x24, 0x00, 0x0c, 0x00, 0x02, 0x00, 0x00, 0x00, 0xae, 0x96, 0x7d, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
// fd00::1, on link: rt6_fill_node's RTA_PREFSRC from ip6_route_get_saddr.
const std::vector<uint8_t> kV6OnLink = {
    0x9c, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x0a, 0x80, 0x80, 0x00, 0xfe, 0x02, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x0f, 0x00,
    0xfe, 0x00, 0x00, 0x00, 0x14, 0x00, 0x01, 0x00, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x14, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x07, 0x00,
    0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
    0x08, 0x00, 0x06, 0x00, 0x00, 0x01, 0x00, 0x00, 0x08, 0x00, 0x04, 0x00, 0x04, 0x00, 0x00, 0x00,
    0x24, 0x00, 0x0c, 0x00, 0x02, 0x00, 0x00, 0x00, 0x6c, 0xaf, 0x62, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00};
// 10.6.0.1 through an address-less netdev (ifindex 3) with only lo's 127.0.0.1 (scope host) on
// the host: ip_route_output_key picks source 0.0.0.0, so no RTA_PREFSRC.
const std::vector<uint8_t> kV4NoSource = {
    0x60, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x02, 0x20, 0x00, 0x00, 0xfe, 0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x08, 0x00, 0x0f, 0x00,
    0xfe, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01, 0x00, 0x0a, 0x06, 0x00, 0x01, 0x08, 0x00, 0x04, 0x00,
    0x03, 0x00, 0x00, 0x00, 0x08, 0x00, 0x19, 0x00, 0x00, 0x00, 0x00, 0x00, 0x24, 0x00, 0x0c, 0x00,
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
// fd06::1 through a netdev on a host with no IPv6 address at all: ip6_route_get_saddr fails, so
// no RTA_PREFSRC (a connect fails with EADDRNOTAVAIL).
const std::vector<uint8_t> kV6NoSource = {
    0x88, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x0a, 0x80, 0x80, 0x00, 0xfe, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x0f, 0x00,
    0xfe, 0x00, 0x00, 0x00, 0x14, 0x00, 0x01, 0x00, 0xfd, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x14, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x06, 0x00,
    0x00, 0x04, 0x00, 0x00, 0x08, 0x00, 0x04, 0x00, 0x03, 0x00, 0x00, 0x00, 0x24, 0x00, 0x0c, 0x00,
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x05, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00};

const nlmsghdr* hdr(const std::vector<uint8_t>& bytes) {
  return reinterpret_cast<const nlmsghdr*>(bytes.data());
}

std::string host_ifname(int ifindex) {
  return ifindex == 1 ? "lo" : ifindex == 3 ? "v0" : ifindex == 4 ? "eth0" : "?";
}

TEST(RouteReply, RecordedIpv4ViaGateway) {
  RouteFacts r = parse_route_reply(hdr(kV4ViaGateway), host_ifname);
  EXPECT_TRUE(r.found);
  EXPECT_FALSE(r.local);
  EXPECT_EQ(r.src, "192.0.2.2");
  EXPECT_EQ(r.gateway, "192.0.2.1");
  EXPECT_EQ(r.oif, "eth0");
  EXPECT_EQ(r.table, RT_TABLE_MAIN);
  EXPECT_EQ(r.mtu, 0);
}

TEST(RouteReply, RecordedIpv4Local) {
  RouteFacts r = parse_route_reply(hdr(kV4Local), host_ifname);
  EXPECT_TRUE(r.found);
  EXPECT_TRUE(r.local);
  EXPECT_EQ(r.src, "127.0.0.1");
  EXPECT_EQ(r.oif, "lo");
  EXPECT_EQ(r.gateway, "");
  EXPECT_EQ(r.table, RT_TABLE_MAIN);
}

TEST(RouteReply, RecordedIpv6OnLink) {
  RouteFacts r = parse_route_reply(hdr(kV6OnLink), host_ifname);
  EXPECT_TRUE(r.found);
  EXPECT_FALSE(r.local);
  EXPECT_EQ(r.src, "fd00::2");
  EXPECT_EQ(r.gateway, "");
  EXPECT_EQ(r.oif, "eth0");
  EXPECT_EQ(r.table, RT_TABLE_MAIN);
}

TEST(RouteReply, RecordedIpv4WithoutPrefsrcIsTheUnspecifiedAddress) {
  RouteFacts r = parse_route_reply(hdr(kV4NoSource), host_ifname);
  EXPECT_TRUE(r.found);
  EXPECT_FALSE(r.local);
  EXPECT_EQ(r.src, "0.0.0.0");  // what connect() on a UDP socket gets too (getsockname)
  EXPECT_EQ(r.oif, "v0");
}

TEST(RouteReply, RecordedIpv6WithoutPrefsrcHasNoSource) {
  RouteFacts r = parse_route_reply(hdr(kV6NoSource), host_ifname);
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.src, "");
  EXPECT_EQ(r.oif, "v0");
}

// An input route's reply (the request had RTA_IIF) says nothing of an output source.
TEST(RouteReply, InputRouteWithoutPrefsrcHasNoSource) {
  Msg m(nlmsg_alloc_simple(RTM_NEWROUTE, 0));
  ASSERT_TRUE(m);
  ASSERT_EQ(nlmsg_append(m.get(), const_cast<uint8_t*>(kV4NoSource.data()) + NLMSG_HDRLEN,
                         kV4NoSource.size() - NLMSG_HDRLEN, NLMSG_ALIGNTO),
            0);
  ASSERT_EQ(nla_put_u32(m.get(), RTA_IIF, 4), 0);
  RouteFacts r = parse_route_reply(nlmsg_hdr(m.get()), host_ifname);
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.src, "");
}

// RealNetProbe's two answers from a lookup's facts.
RouteFacts looked_up(const std::string& dst) {
  RouteFacts r;
  if (dst == "192.0.2.9") {
    r.found = true;
    r.src = "192.0.2.1";
  } else if (dst == "192.0.2.1") {
    r.found = true;
    r.local = true;
    r.src = "192.0.2.1";
  } else if (dst == "fd06::1") {
    r.found = true;  // no source address
  } else if (dst == "10.3.0.1") {
    r.err = EACCES;  // a prohibit route
    r.error = "Permission denied";
  } else if (dst == "10.9.9.9") {
    r.err = ENETUNREACH;
    r.error = "Network is unreachable";
  } else {
    r.error = "connect to netlink: Object not found";  // a local failure, no errno
  }
  return r;
}

TEST(RealNetProbe, AnswersFromTheLookup) {
  RealNetProbe net(looked_up);
  auto src = net.source_for("192.0.2.9");
  ASSERT_TRUE(src.ok());
  EXPECT_EQ(*src, "192.0.2.1");
  EXPECT_FALSE(net.is_local("192.0.2.9"));
  EXPECT_TRUE(net.is_local("192.0.2.1"));
  EXPECT_FALSE(net.is_local("10.9.9.9"));

  auto unreachable = net.source_for("10.9.9.9");
  ASSERT_FALSE(unreachable.ok());
  EXPECT_EQ(unreachable.error().code, ErrorCode::kFailure);
  EXPECT_EQ(unreachable.error().sys_errno, ENETUNREACH);
  EXPECT_EQ(unreachable.error().message, "no route to 10.9.9.9: Network is unreachable");
  EXPECT_EQ(net.source_for("10.3.0.1").error().sys_errno, EACCES);

  auto sourceless = net.source_for("fd06::1");
  ASSERT_FALSE(sourceless.ok());
  EXPECT_EQ(sourceless.error().sys_errno, EADDRNOTAVAIL);

  auto local_failure = net.source_for("10.0.0.1");
  ASSERT_FALSE(local_failure.ok());
  EXPECT_EQ(local_failure.error().sys_errno, 0);

  auto bad = net.source_for("not-an-address");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kUsage);
}

// Loopback exists in every network namespace, so these hold on any build machine.
TEST(RealNetProbe, LoopbackRoute) {
  RealNetProbe net;
  auto lo = lookup_route("127.0.0.1");
  if (!lo.found && !lo.error.empty() && lo.err == 0) GTEST_SKIP() << "no route netlink here: " << lo.error;
  auto src = net.source_for("127.0.0.1");
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_EQ(*src, "127.0.0.1");
  EXPECT_EQ(*src, lo.src);  // one lookup
  EXPECT_TRUE(net.is_local("127.0.0.1"));
  EXPECT_TRUE(net.is_local("127.0.0.2"));        // all of 127/8 is local
  EXPECT_FALSE(net.is_local("192.0.2.254"));     // TEST-NET-1, never configured here
  EXPECT_FALSE(net.is_local("not-an-address"));
  EXPECT_FALSE(net.source_for("not-an-address").ok());
  EXPECT_EQ(lookup_route("not-an-address").err, EINVAL);
}

}  // namespace
}  // namespace rnvme
