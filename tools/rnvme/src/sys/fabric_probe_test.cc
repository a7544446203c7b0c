#include "sys/fabric_probe.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <arpa/inet.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <cstring>
#include <memory>

#include "core/doctor.h"  // map_tos(): what a parsed reply means to the doctor
#include "sys/netlink.h"
#include "sys/nl_handles.h"

namespace rnvme {
namespace {

struct MsgDeleter {
  void operator()(nl_msg* m) const { nlmsg_free(m); }
};
using Msg = std::unique_ptr<nl_msg, MsgDeleter>;

// An RTM_GETDCB reply to DCB_CMD_IEEE_GET laid out as net/dcb/dcbnl.c (dcbnl_ieee_fill) sends it:
// dcbmsg, IFNAME, IEEE { ETS, PFC, APP_TABLE { APP... } }, DCBX.
Msg dcb_reply(bool with_ieee) {
  Msg m(nlmsg_alloc_simple(RTM_GETDCB, 0));
  dcbmsg dm{};
  dm.dcb_family = AF_UNSPEC;
  dm.cmd = DCB_CMD_IEEE_GET;
  nlmsg_append(m.get(), &dm, sizeof dm, NLMSG_ALIGNTO);
  nla_put_string(m.get(), DCB_ATTR_IFNAME, "ens1f0np0");
  if (with_ieee) {
    nlattr* ieee = nla_nest_start(m.get(), DCB_ATTR_IEEE);
    ieee_ets ets{};
    ets.ets_cap = 8;
    const uint8_t prio_tc[8] = {1, 0, 2, 3, 4, 5, 6, 7};
    const uint8_t bw[8] = {10, 10, 10, 40, 10, 10, 5, 5};
    for (int i = 0; i < 8; i++) {
      ets.prio_tc[i] = prio_tc[i];
      ets.tc_tx_bw[i] = bw[i];
      ets.tc_tsa[i] = IEEE_8021QAZ_TSA_ETS;
    }
    nla_put(m.get(), DCB_ATTR_IEEE_ETS, sizeof ets, &ets);
    ieee_pfc pfc{};
    pfc.pfc_cap = 8;
    pfc.pfc_en = 0x08;
    nla_put(m.get(), DCB_ATTR_IEEE_PFC, sizeof pfc, &pfc);
    nlattr* apps = nla_nest_start(m.get(), DCB_ATTR_IEEE_APP_TABLE);
    for (auto [sel, prio, proto] : {std::tuple{5, 3, 26}, std::tuple{5, 6, 48}, std::tuple{1, 4, 0x8915}}) {
      dcb_app a{};
      a.selector = static_cast<uint8_t>(sel);
      a.priority = static_cast<uint8_t>(prio);
      a.protocol = static_cast<uint16_t>(proto);
      nla_put(m.get(), DCB_ATTR_IEEE_APP, sizeof a, &a);
    }
    nla_nest_end(m.get(), apps);
    // The trust table as dcbnl_ieee_fill_trust sends it: DSCP first, then PCP (DCB_ATTR_DCB_APP).
    nlattr* trust = nla_nest_start(m.get(), kDcbAttrTrustTable);
    nla_put_u8(m.get(), 1, 5);
    nla_put_u8(m.get(), 2, 255);
    nla_nest_end(m.get(), trust);
    nla_nest_end(m.get(), ieee);
  }
  nla_put_u8(m.get(), DCB_ATTR_DCBX, DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE);
  return m;
}

// A request is built whole or not sent: an attribute that does not fit, or
// no message at all, is a failure to build, before any socket is opened.
TEST(NetlinkRequest, BuiltWholeOrNotAtAll) {
  const std::string huge(70000, 'x');  // longer than a netlink message
  nl::Msg m(nlmsg_alloc_simple(RTM_GETDCB, NLM_F_REQUEST));
  EXPECT_TRUE(nl::built(m, [](nl_msg* msg) { return nla_put_u32(msg, 1, 7) == 0; }));
  EXPECT_FALSE(nl::built(m, [&](nl_msg* msg) { return nla_put_string(msg, 2, huge.c_str()) == 0; }));
  EXPECT_FALSE(nl::built(nl::Msg(), nullptr));
  EXPECT_TRUE(nl::built(m, nullptr));

  auto st = LibnlRdmaNetlink().add_link(huge, "rxe", "eth0");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("cannot build the netlink request"), std::string::npos)
      << st.error().message;
  DcbState d = LibnlFabricProbe().dcb(huge);
  EXPECT_NE(d.error.find("cannot build the request"), std::string::npos) << d.error;
}

// One socket opener and one meaning of a failed exchange for both netlink adapters: the kernel's
// errno kept (RDMA's Error::sys_errno as FabricProbe's Reply::err), 0 for a local failure.
TEST(NetlinkRequest, OneSocketOpenerAndTheKernelsErrnoKept) {
  int rc = 1;
  nl::Sock none = nl::open_socket(40, rc);  // past MAX_LINKS: no such netlink protocol
  EXPECT_FALSE(none);
  EXPECT_LT(rc, 0);
  EXPECT_NE(rc, -NLE_NOMEM);
  Error refused = rdma_netlink_error("rdma link add rxe9 type rxe netdev eth0", -NLE_PERM, EPERM);
  EXPECT_EQ(refused.code, ErrorCode::kEnvironment);
  EXPECT_EQ(refused.sys_errno, EPERM);
  EXPECT_EQ(refused.message, "rdma link add rxe9 type rxe netdev eth0: Operation not permitted");
  EXPECT_FALSE(refused.fix.empty());
  EXPECT_EQ(rdma_netlink_error("connect to RDMA netlink", -NLE_PROTO_MISMATCH, 0).sys_errno, 0);
}

TEST(FabricProbe, ParsesAnIeeeDcbReply) {
  Msg m = dcb_reply(true);
  DcbState d = parse_dcb_ieee_reply(nlmsg_hdr(m.get()));
  EXPECT_EQ(d.support, DcbState::kPresent);
  EXPECT_TRUE(d.has_pfc);
  EXPECT_EQ(d.pfc_cap, 8);
  EXPECT_EQ(d.pfc_en, 0x08);
  ASSERT_TRUE(d.has_ets);
  EXPECT_EQ(d.prio_tc, (std::array<int, 8>{1, 0, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(d.tc_bw[3], 40);
  EXPECT_EQ(d.tc_tsa[0], IEEE_8021QAZ_TSA_ETS);
  ASSERT_EQ(d.apps.size(), 3u);
  EXPECT_EQ(d.apps[0].selector, 5);
  EXPECT_EQ(d.apps[0].priority, 3);
  EXPECT_EQ(d.apps[0].protocol, 26);
  EXPECT_EQ(d.apps[2].protocol, 0x8915);  // RoCE v1's ethertype
  EXPECT_EQ(d.dcbx, DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE);
  EXPECT_EQ(d.trust, (std::vector<int>{5, 255}));
  // Through the mapping the doctor applies: tos 104 is DSCP 26, priority 3, which has PFC.
  auto mp = map_tos(d, 104);
  ASSERT_TRUE(mp.priority);
  EXPECT_EQ(*mp.priority, 3);
}

TEST(FabricProbe, DcbReplyWithoutIeeeIsPresentButEmpty) {
  Msg m = dcb_reply(false);
  DcbState d = parse_dcb_ieee_reply(nlmsg_hdr(m.get()));
  EXPECT_EQ(d.support, DcbState::kPresent);
  EXPECT_FALSE(d.has_pfc);
  EXPECT_FALSE(d.has_ets);
  EXPECT_TRUE(d.apps.empty());
  EXPECT_TRUE(d.trust.empty());
}

std::string fake_ifname(int ifindex) { return ifindex == 4 ? "ens1f0np0" : "?"; }

// An RTM_NEWLINK of a VLAN as rtnl_fill_ifinfo and vlan_fill_info send it.
TEST(FabricProbe, ParsesAVlanLinkReply) {
  Msg m(nlmsg_alloc_simple(RTM_NEWLINK, 0));
  ifinfomsg ifi{};
  ifi.ifi_index = 9;
  nlmsg_append(m.get(), &ifi, sizeof ifi, NLMSG_ALIGNTO);
  nla_put_string(m.get(), IFLA_IFNAME, "ens1f0np0.100");
  nla_put_u32(m.get(), IFLA_LINK, 4);
  nlattr* li = nla_nest_start(m.get(), IFLA_LINKINFO);
  nla_put_string(m.get(), IFLA_INFO_KIND, "vlan");
  nlattr* data = nla_nest_start(m.get(), IFLA_INFO_DATA);
  nla_put_u16(m.get(), IFLA_VLAN_ID, 100);
  nlattr* eg = nla_nest_start(m.get(), IFLA_VLAN_EGRESS_QOS);
  for (auto [from, to] : {std::pair{0u, 3u}, std::pair{2u, 5u}}) {
    ifla_vlan_qos_mapping q{from, to};
    nla_put(m.get(), IFLA_VLAN_QOS_MAPPING, sizeof q, &q);
  }
  nla_nest_end(m.get(), eg);
  nla_nest_end(m.get(), data);
  nla_nest_end(m.get(), li);
  VlanFacts v = parse_link_reply(nlmsg_hdr(m.get()), fake_ifname);
  EXPECT_TRUE(v.is_vlan);
  EXPECT_EQ(v.lower, "ens1f0np0");
  EXPECT_EQ(v.id, 100);
  EXPECT_EQ(v.egress_qos, (std::map<int, int>{{0, 3}, {2, 5}}));
}

TEST(FabricProbe, NonVlanLinkIsNotAVlan) {
  Msg m(nlmsg_alloc_simple(RTM_NEWLINK, 0));
  ifinfomsg ifi{};
  nlmsg_append(m.get(), &ifi, sizeof ifi, NLMSG_ALIGNTO);
  nlattr* li = nla_nest_start(m.get(), IFLA_LINKINFO);
  nla_put_string(m.get(), IFLA_INFO_KIND, "veth");
  nla_nest_end(m.get(), li);
  EXPECT_FALSE(parse_link_reply(nlmsg_hdr(m.get()), fake_ifname).is_vlan);
  LibnlFabricProbe p;
  EXPECT_FALSE(p.vlan("lo").is_vlan);
}

void put_ip(nl_msg* m, int type, int family, const char* ip) {
  unsigned char b[16] = {};
  ASSERT_EQ(inet_pton(family, ip, b), 1) << ip;
  nla_put(m, type, family == AF_INET ? 4 : 16, b);
}

// RTM_NEWNEIGH as neigh_fill_info sends it (what a dump of the neighbour table holds).
Msg neigh_msg(int family, int ifindex, uint16_t state, const char* ip) {
  Msg m(nlmsg_alloc_simple(RTM_NEWNEIGH, NLM_F_MULTI));
  ndmsg nd{};
  nd.ndm_family = static_cast<unsigned char>(family);
  nd.ndm_ifindex = ifindex;
  nd.ndm_state = state;
  nd.ndm_type = RTN_UNICAST;
  nlmsg_append(m.get(), &nd, sizeof nd, NLMSG_ALIGNTO);
  put_ip(m.get(), NDA_DST, family, ip);
  const unsigned char mac[6] = {2, 0, 0, 0, 0, 1};
  nla_put(m.get(), NDA_LLADDR, sizeof mac, mac);
  nla_put_u32(m.get(), NDA_PROBES, 0);
  return m;
}

TEST(FabricProbe, NeighbourStateFromACache) {
  nl_cache* c = nullptr;
  ASSERT_EQ(nl_cache_alloc_name("route/neigh", &c), 0);
  nl::Cache cache(c);
  for (auto [family, ifindex, state, ip] :
       {std::tuple{AF_INET, 4, NUD_REACHABLE, "10.9.0.254"}, std::tuple{AF_INET, 5, NUD_FAILED, "10.9.0.254"},
        std::tuple{AF_INET6, 4, NUD_STALE, "fd11::2"}, std::tuple{AF_INET, 4, NUD_PERMANENT, "10.9.0.253"}}) {
    Msg m = neigh_msg(family, ifindex, static_cast<uint16_t>(state), ip);
    ASSERT_EQ(nl_cache_parse_and_add(cache.get(), m.get()), 0) << ip;
  }
  EXPECT_EQ(neighbour_in(cache.get(), 4, "10.9.0.254"), "REACHABLE");
  EXPECT_EQ(neighbour_in(cache.get(), 5, "10.9.0.254"), "FAILED");  // same address, other netdev
  EXPECT_EQ(neighbour_in(cache.get(), 4, "fd11::2"), "STALE");
  EXPECT_EQ(neighbour_in(cache.get(), 4, "10.9.0.253"), "PERMANENT");
  EXPECT_EQ(neighbour_in(cache.get(), 4, "10.9.0.1"), "");           // no entry
  EXPECT_EQ(neighbour_in(cache.get(), 6, "10.9.0.254"), "");
  EXPECT_EQ(neighbour_in(cache.get(), 4, "not-an-ip"), "");
}

TEST(FabricProbe, NudStateNames) {
  EXPECT_EQ(nud_state_name(NUD_REACHABLE), "REACHABLE");
  EXPECT_EQ(nud_state_name(NUD_PERMANENT), "PERMANENT");
  EXPECT_EQ(nud_state_name(NUD_FAILED), "FAILED");
  EXPECT_EQ(nud_state_name(NUD_INCOMPLETE), "INCOMPLETE");
  EXPECT_EQ(nud_state_name(0), "NONE");
}

TEST(FabricProbe, FakeDefaultsAreNoRouteAndNoDcb) {
  FakeFabricProbe p;
  auto r = p.route_to("198.51.100.1");
  EXPECT_FALSE(r.found);
  EXPECT_EQ(r.err, 101);
  EXPECT_EQ(p.dcb("eth0").support, DcbState::kAbsent);
  EXPECT_EQ(p.neighbour_state("eth0", "198.51.100.1"), "");
}

// The real adapter against this machine's kernel: an address that is not one is refused before
// any netlink traffic, and the loopback address routes through lo.
TEST(FabricProbe, LibnlRouteLookup) {
  LibnlFabricProbe p;
  auto bad = p.route_to("not-an-ip");
  EXPECT_FALSE(bad.found);
  EXPECT_EQ(bad.err, EINVAL);
  auto lo = p.route_to("127.0.0.1");
  if (!lo.found && !lo.error.empty() && lo.err == 0) GTEST_SKIP() << "no route netlink here: " << lo.error;
  EXPECT_TRUE(lo.found) << lo.error;
  EXPECT_EQ(lo.oif, "lo");
  EXPECT_TRUE(lo.local);
}

}  // namespace
}  // namespace rnvme
