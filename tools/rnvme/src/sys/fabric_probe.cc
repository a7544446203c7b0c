#include "sys/fabric_probe.h"
#include "core/ip.h"
#include "sys/nl_handles.h"
#include "sys/verbs.h"

#include <arpa/inet.h>
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
#include <functional>
#include <memory>

namespace rnvme {
namespace {

using nl::Sock;
using nl::Msg;

struct Reply {
  int err = 0;             // errno the kernel answered with (positive), 0 if none
  std::string failure;     // a local failure (socket, send), empty if none
};

// A socket connected to `protocol`; empty, with why in `r`, if there is none.
Sock open_socket(int protocol, Reply& r) {
  int rc = 0;
  Sock sock = nl::open_socket(protocol, rc);
  if (rc == -NLE_NOMEM)
    r = {ENOMEM, "out of memory allocating a netlink socket"};
  else if (!sock)
    r = {0, fmt::format("connect to netlink: {}", nl_geterror(rc))};
  return sock;
}

// nl::transact on a fresh socket of `protocol`, every reply handed to `on_msg`.
Reply transact(nl_msg* msg, const std::function<void(nlmsghdr*)>& on_msg,
               int protocol = NETLINK_ROUTE) {
  Reply r;
  Sock sock = open_socket(protocol, r);
  if (!sock) return r;
  nl::Exchange x = nl::transact(sock.get(), msg, [&](nl_msg* m) { on_msg(nlmsg_hdr(m)); });
  r.err = x.err;
  if (x.rc < 0 && !x.err)
    r.failure = fmt::format("{}route netlink: {}", x.sent ? "" : "send to ", nl_geterror(x.rc));
  return r;
}

// `ip` as a libnl address (its family and bytes); empty if it is not an IP address.
nl::Addr nl_address(const std::string& ip) {
  auto a = parse_ip(ip);
  if (!a) return {};
  return nl::Addr(nl_addr_build(a->family, a->bytes.data(), a->size()));
}

std::string nl_addr_text(nl_addr* a) {
  if (!a) return {};
  const int family = nl_addr_get_family(a);
  const unsigned want = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
  if (!want || nl_addr_get_len(a) < want) return {};
  return ip_text(family, nl_addr_get_binary_addr(a));
}

std::string ifname(int ifindex) {
  char buf[IF_NAMESIZE] = {};
  return if_indextoname(static_cast<unsigned>(ifindex), buf) ? std::string(buf)
                                                             : fmt::format("ifindex {}", ifindex);
}

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

RouteFacts parse_route_reply(const nlmsghdr* h, std::string (*ifname_of)(int ifindex)) {
  RouteFacts out;
  rtnl_route* parsed = nullptr;
  if (h->nlmsg_type != RTM_NEWROUTE || rtnl_route_parse(const_cast<nlmsghdr*>(h), &parsed) < 0)
    return out;
  nl::Route route(parsed);
  out.found = true;
  out.local = rtnl_route_get_type(route.get()) == RTN_LOCAL;
  // RTA_OIF and RTA_GATEWAY, as libnl keeps them: the route's only next hop.
  if (rtnl_nexthop* nh = rtnl_route_get_nnexthops(route.get()) ? rtnl_route_nexthop_n(route.get(), 0) : nullptr) {
    if (int oif = rtnl_route_nh_get_ifindex(nh); oif > 0) out.oif = ifname_of(oif);
    out.gateway = nl_addr_text(rtnl_route_nh_get_gateway(nh));
  }
  out.src = nl_addr_text(rtnl_route_get_pref_src(route.get()));
  out.table = static_cast<int>(rtnl_route_get_table(route.get()));  // RTA_TABLE, else rtm_table
  if (uint32_t mtu = 0; rtnl_route_get_metric(route.get(), RTAX_MTU, &mtu) == 0)
    out.mtu = static_cast<int>(mtu);
  return out;
}

RouteFacts LibnlFabricProbe::route_to(const std::string& dst) {
  RouteFacts out;
  nl::Addr addr = nl_address(dst);
  if (!addr) {
    out.err = EINVAL;
    out.error = "not an IP address: " + dst;
    return out;
  }
  // libnl's request for the lookup (what rtnl_route_lookup sends), with RTM_F_LOOKUP_TABLE to
  // report the table the lookup used, not "main"; sent through transact, which keeps the errno.
  nl::Route tmpl(rtnl_route_alloc());
  Msg msg(nlmsg_alloc_simple(RTM_GETROUTE, NLM_F_REQUEST));
  if (!tmpl || !msg || rtnl_route_set_dst(tmpl.get(), addr.get()) < 0) {
    out.error = "out of memory";
    return out;
  }
  rtnl_route_set_flags(tmpl.get(), RTM_F_LOOKUP_TABLE);
  if (int rc = rtnl_route_build_msg(msg.get(), tmpl.get()); rc < 0) {
    out.error = fmt::format("route request: {}", nl_geterror(rc));
    return out;
  }
  Reply r = transact(msg.get(), [&](nlmsghdr* h) {
    if (RouteFacts f = parse_route_reply(h, ifname); f.found) out = f;
  });
  if (r.err) {
    out.found = false;
    out.err = r.err;
    out.error = std::strerror(r.err);
  } else if (!r.failure.empty()) {
    out.found = false;
    out.error = r.failure;
  } else if (!out.found) {
    out.error = "the kernel sent no route";
  }
  return out;
}

std::string neighbour_in(nl_cache* neighbours, int ifindex, const std::string& ip) {
  nl::Addr addr = nl_address(ip);
  if (!addr || !neighbours) return {};
  nl::Neigh n(rtnl_neigh_get(neighbours, ifindex, addr.get()));
  const int state = n ? rtnl_neigh_get_state(n.get()) : -1;
  return state < 0 ? std::string() : nud_state_name(state);
}

std::string LibnlFabricProbe::neighbour_state(const std::string& ifn, const std::string& ip) {
  const unsigned idx = if_nametoindex(ifn.c_str());
  if (!idx || !nl_address(ip)) return {};
  Reply ignored;
  Sock sock = open_socket(NETLINK_ROUTE, ignored);
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
  Reply ignored;
  Sock sock = open_socket(NETLINK_ROUTE, ignored);
  rtnl_link* link = nullptr;
  if (!sock || rtnl_link_get_kernel(sock.get(), 0, ifn.c_str(), &link) < 0) return {};
  nl::Link owned(link);
  return vlan_facts(owned.get(), ifname);
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
  Reply r = transact(msg.get(), [&](nlmsghdr* h) {
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
  transact(
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
