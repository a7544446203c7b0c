#include "sys/fabric_probe.h"
#include "sys/nl_handles.h"
#include "sys/route.h"
#include "sys/verbs.h"

#include <fmt/format.h>
#include <linux/dcbnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link/vlan.h>
#include <rdma/rdma_netlink.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace rnvme {
namespace {

using nl::Sock;
using nl::Msg;

// Walks the attributes nested in `nest` (the libnl macro for it does not pass -Wold-style-cast).
template <typename F>
void for_each_nested(const nlattr* nest, F f) {
  int rem = nla_len(nest);
  for (auto* a = static_cast<nlattr*>(nla_data(nest)); nla_ok(a, rem); a = nla_next(a, &rem)) f(a);
}

}  // namespace

std::string nud_state_name(int s) {
  if (s & NUD_PERMANENT) return "PERMANENT";
  if (s & NUD_NOARP) return "NOARP";
  if (s & NUD_REACHABLE) return "REACHABLE";
  if (s & NUD_STALE) return "STALE";
  if (s & NUD_DELAY) return "DELAY";
  if (s & NUD_PROBE) return "PROBE";
  if (s & NUD_FAILED) return "FAILED";
  if (s & NUD_INCOMPLETE) return "INCOMPLETE";
  return s ? fmt::format("state {:#x}", s) : std::string("NONE");
}

// The tool's one route lookup (sys/route.h).
RouteFacts LibnlFabricProbe::route_to(const std::string& dst) { return lookup_route(dst); }

std::string neighbour_in(nl_cache* neighbours, int ifindex, const std::string& ip) {
  nl::Addr addr = nl::address(ip);
  if (!addr || !neighbours) return {};
  nl::Neigh n(rtnl_neigh_get(neighbours, ifindex, addr.get()));
  const int state = n ? rtnl_neigh_get_state(n.get()) : -1;
  return state < 0 ? std::string() : nud_state_name(state);
}

std::string LibnlFabricProbe::neighbour_state(const std::string& ifn, const std::string& ip) {
  const unsigned idx = if_nametoindex(ifn.c_str());
  if (!idx || !nl::address(ip)) return {};
  int rc = 0;
  Sock sock = nl::open_socket(NETLINK_ROUTE, rc);
  nl_cache* cache = nullptr;
  if (!sock || rtnl_neigh_alloc_cache(sock.get(), &cache) < 0) return {};
  nl::Cache neighbours(cache);
  return neighbour_in(neighbours.get(), static_cast<int>(idx), ip);  // no entry: empty
}

DcbState parse_dcb_ieee_reply(const nlmsghdr* h) {
  DcbState d;
  std::array<nlattr*, DCB_ATTR_MAX + 1> tb{};
  if (nlmsg_parse(const_cast<nlmsghdr*>(h), sizeof(dcbmsg), tb.data(), DCB_ATTR_MAX, nullptr) < 0) {
    d.error = "unparsable DCB reply";
    return d;
  }
  d.support = DcbState::kPresent;
  if (tb[DCB_ATTR_DCBX] && nla_len(tb[DCB_ATTR_DCBX]) >= 1) d.dcbx = nla_get_u8(tb[DCB_ATTR_DCBX]);
  if (!tb[DCB_ATTR_IEEE]) return d;
  // Parsed up to the trust table, which older <linux/dcbnl.h> do not name.
  std::array<nlattr*, kDcbAttrTrustTable + 1> ie{};
  if (nla_parse_nested(ie.data(), kDcbAttrTrustTable, tb[DCB_ATTR_IEEE], nullptr) < 0) return d;
  if (nlattr* a = ie[DCB_ATTR_IEEE_PFC]; a && nla_len(a) >= 2) {
    // pfc_cap and pfc_en are the first two bytes of struct ieee_pfc.
    const auto* b = static_cast<const uint8_t*>(nla_data(a));
    d.has_pfc = true;
    d.pfc_cap = b[0];
    d.pfc_en = b[1];
  }
  if (nlattr* a = ie[DCB_ATTR_IEEE_ETS]; a && nla_len(a) >= static_cast<int>(sizeof(ieee_ets))) {
    ieee_ets ets;
    std::memcpy(&ets, nla_data(a), sizeof ets);
    d.has_ets = true;
    for (size_t i = 0; i < 8; i++) {
      d.prio_tc[i] = ets.prio_tc[i];
      d.tc_tsa[i] = ets.tc_tsa[i];
      d.tc_bw[i] = ets.tc_tx_bw[i];
    }
  }
  if (nlattr* t = ie[DCB_ATTR_IEEE_APP_TABLE]) {
    for_each_nested(t, [&](nlattr* a) {
      if (nla_type(a) != DCB_ATTR_IEEE_APP || nla_len(a) < static_cast<int>(sizeof(dcb_app))) return;
      dcb_app app;
      std::memcpy(&app, nla_data(a), sizeof app);
      d.apps.push_back({app.selector, app.priority, app.protocol});
    });
  }
  if (nlattr* t = ie[kDcbAttrTrustTable]) {
    // One u8 selector per entry, typed DCB_ATTR_IEEE_APP (1) or DCB_ATTR_DCB_APP (2, PCP).
    for_each_nested(t, [&](nlattr* a) {
      if ((nla_type(a) == 1 || nla_type(a) == 2) && nla_len(a) >= 1) d.trust.push_back(nla_get_u8(a));
    });
  }
  return d;
}

namespace {

// The VLAN facts of a link libnl parsed (IFLA_LINK, IFLA_INFO_KIND "vlan", IFLA_VLAN_*).
VlanFacts vlan_facts(rtnl_link* link, std::string (*ifname_of)(int ifindex)) {
  VlanFacts v;
  if (!link || !rtnl_link_is_vlan(link)) return v;
  v.is_vlan = true;
  if (int lower = rtnl_link_get_link(link); lower > 0) v.lower = ifname_of(lower);
  v.id = rtnl_link_vlan_get_id(link);
  int n = 0;
  if (const vlan_map* map = rtnl_link_vlan_get_egress_map(link, &n)) {
    for (int i = 0; i < n; i++)
      v.egress_qos[static_cast<int>(map[i].vm_from)] = static_cast<int>(map[i].vm_to & 7);
  }
  return v;
}

}  // namespace

VlanFacts parse_link_reply(const nlmsghdr* h, std::string (*ifname_of)(int ifindex)) {
  // Through libnl-route's parser for RTM_NEWLINK, the one rtnl_link_get_kernel uses.
  Msg msg(nlmsg_convert(const_cast<nlmsghdr*>(h)));
  if (!msg) return {};
  nlmsg_set_proto(msg.get(), NETLINK_ROUTE);
  nl::Object obj;
  nl_msg_parse(
      msg.get(),
      [](nl_object* o, void* arg) {
        nl_object_get(o);
        static_cast<nl::Object*>(arg)->reset(o);
      },
      &obj);
  if (!obj || std::string_view(nl_object_get_type(obj.get())) != "route/link") return {};
  return vlan_facts(reinterpret_cast<rtnl_link*>(obj.get()), ifname_of);
}

VlanFacts LibnlFabricProbe::vlan(const std::string& ifn) {
  int rc = 0;
  Sock sock = nl::open_socket(NETLINK_ROUTE, rc);
  rtnl_link* link = nullptr;
  if (!sock || rtnl_link_get_kernel(sock.get(), 0, ifn.c_str(), &link) < 0) return {};
  nl::Link owned(link);
  return vlan_facts(owned.get(), nl::ifname);
}

DcbState LibnlFabricProbe::dcb(const std::string& ifn) {
  DcbState out;
  Msg msg(nlmsg_alloc_simple(RTM_GETDCB, NLM_F_REQUEST));
  dcbmsg dm{};
  dm.dcb_family = AF_UNSPEC;
  dm.cmd = DCB_CMD_IEEE_GET;
  if (!nl::built(msg, [&](nl_msg* m) {
        return nlmsg_append(m, &dm, sizeof dm, NLMSG_ALIGNTO) == 0 &&
               nla_put_string(m, DCB_ATTR_IFNAME, ifn.c_str()) == 0;
      })) {
    out.error = fmt::format("RTM_GETDCB {}: cannot build the request", ifn);
    return out;
  }
  bool got = false;
  nl::Reply r = nl::query(msg.get(), [&](nlmsghdr* h) {
    if (h->nlmsg_type != RTM_GETDCB) return;
    out = parse_dcb_ieee_reply(h);
    got = true;
  });
  if (r.err == EOPNOTSUPP) {
    out = DcbState{};
    out.support = DcbState::kAbsent;
  } else if (r.err) {
    out = DcbState{};
    out.error = fmt::format("RTM_GETDCB {}: {}", ifn, std::strerror(r.err));
  } else if (!r.failure.empty()) {
    out = DcbState{};
    out.error = r.failure;
  } else if (!got) {
    out.error = "no DCB reply";
  }
  return out;
}

DeviceLimits LibnlFabricProbe::device_limits(const RdmaDevice& dev) {
  DeviceLimits l;
  verbs_device_limits(dev.name, l);
  if (dev.index < 0) return l;
  // The resource summary of `rdma resource show`: entries of name and current count.
  Msg msg(nlmsg_alloc_simple(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_GET), NLM_F_REQUEST));
  // unbuilt, the resource counts stay unknown, as when the kernel has none
  if (!nl::built(msg, [&](nl_msg* m) {
        return nla_put_u32(m, RDMA_NLDEV_ATTR_DEV_INDEX, static_cast<uint32_t>(dev.index)) == 0;
      }))
    return l;
  nl::query(
      msg.get(),
      [&](nlmsghdr* h) {
        std::array<nlattr*, RDMA_NLDEV_ATTR_MAX> tb{};
        if (nlmsg_parse(h, 0, tb.data(), RDMA_NLDEV_ATTR_MAX - 1, nullptr) < 0) return;
        if (!tb[RDMA_NLDEV_ATTR_RES_SUMMARY]) return;
        for_each_nested(tb[RDMA_NLDEV_ATTR_RES_SUMMARY], [&](nlattr* entry) {
          std::array<nlattr*, RDMA_NLDEV_ATTR_MAX> e{};
          if (nla_parse_nested(e.data(), RDMA_NLDEV_ATTR_MAX - 1, entry, nullptr) < 0) return;
          if (!e[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME] || !e[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR])
            return;
          const std::string name = nla_get_string(e[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME]);
          const int curr = static_cast<int>(nla_get_u64(e[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR]));
          if (name == "qp") l.used_qp = curr;
          else if (name == "cq") l.used_cq = curr;
          else if (name == "mr") l.used_mr = curr;
        });
      },
      NETLINK_RDMA);
  return l;
}

}  // namespace rnvme
