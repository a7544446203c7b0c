#include "sys/fabric_probe.h"
#include "sys/nl_handles.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <linux/dcbnl.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <rdma/rdma_netlink.h>
#ifdef RNVME_HAVE_IBVERBS
#include <infiniband/verbs.h>
#endif

#include <array>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>

namespace rnvme {
namespace {

using nl::Sock;
using nl::Msg;
using nl::Cb;

struct Reply {
  int err = 0;             // errno the kernel answered with (positive), 0 if none
  std::string failure;     // a local failure (socket, send), empty if none
};

// Sends `msg` on a fresh NETLINK_ROUTE socket and hands every reply to `on_msg`; the kernel's
// error answer is kept as its errno (libnl would translate it to its own codes).
Reply transact(nl_msg* msg, const std::function<void(nlmsghdr*)>& on_msg,
              int protocol = NETLINK_ROUTE) {
  Reply r;
  Sock sock(nl_socket_alloc());
  if (!sock) return {ENOMEM, "out of memory allocating a netlink socket"};
  if (int rc = nl_connect(sock.get(), protocol); rc < 0)
    return {0, fmt::format("connect to netlink: {}", nl_geterror(rc))};
  Cb cb(nl_cb_alloc(NL_CB_DEFAULT));
  if (!cb) return {ENOMEM, "out of memory allocating a netlink callback"};
  struct Ctx {
    const std::function<void(nlmsghdr*)>* on_msg;
    Reply* r;
  } ctx{&on_msg, &r};
  nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM,
            [](nl_msg* m, void* arg) -> int {
              (*static_cast<Ctx*>(arg)->on_msg)(nlmsg_hdr(m));
              return NL_OK;
            },
            &ctx);
  nl_cb_err(cb.get(), NL_CB_CUSTOM,
            [](sockaddr_nl*, nlmsgerr* e, void* arg) -> int {
              static_cast<Ctx*>(arg)->r->err = -e->error;
              return NL_STOP;
            },
            &ctx);
  if (int rc = nl_send_auto(sock.get(), msg); rc < 0)
    return {0, fmt::format("send to route netlink: {}", nl_geterror(rc))};
  int rc = nl_recvmsgs(sock.get(), cb.get());
  if (rc < 0 && !r.err) r.failure = fmt::format("route netlink: {}", nl_geterror(rc));
  return r;
}

// Address family and bytes of an IP address; 0 if `ip` is not one.
int parse_ip(const std::string& ip, std::array<unsigned char, 16>& b) {
  if (inet_pton(AF_INET, ip.c_str(), b.data()) == 1) return AF_INET;
  if (inet_pton(AF_INET6, ip.c_str(), b.data()) == 1) return AF_INET6;
  return 0;
}

std::string ip_text(int family, const nlattr* a) {
  char buf[INET6_ADDRSTRLEN] = {};
  const int want = family == AF_INET ? 4 : 16;
  if (!a || nla_len(a) < want) return {};
  return inet_ntop(family, nla_data(a), buf, sizeof buf) ? std::string(buf) : std::string();
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

RouteFacts LibnlFabricProbe::route_to(const std::string& dst) {
  RouteFacts out;
  std::array<unsigned char, 16> addr{};
  const int family = parse_ip(dst, addr);
  if (!family) {
    out.err = EINVAL;
    out.error = "not an IP address: " + dst;
    return out;
  }
  Msg msg(nlmsg_alloc_simple(RTM_GETROUTE, NLM_F_REQUEST));
  if (!msg) {
    out.error = "out of memory";
    return out;
  }
  rtmsg rtm{};
  rtm.rtm_family = static_cast<unsigned char>(family);
  rtm.rtm_dst_len = family == AF_INET ? 32 : 128;
  rtm.rtm_flags = RTM_F_LOOKUP_TABLE;  // report the table the lookup used, not "main"
  nlmsg_append(msg.get(), &rtm, sizeof rtm, NLMSG_ALIGNTO);
  nla_put(msg.get(), RTA_DST, family == AF_INET ? 4 : 16, addr.data());
  Reply r = transact(msg.get(), [&](nlmsghdr* h) {
    if (h->nlmsg_type != RTM_NEWROUTE) return;
    std::array<nlattr*, RTA_MAX + 1> tb{};
    if (nlmsg_parse(h, sizeof(rtmsg), tb.data(), RTA_MAX, nullptr) < 0) return;
    const auto* rm = static_cast<const rtmsg*>(nlmsg_data(h));
    out.found = true;
    out.local = rm->rtm_type == RTN_LOCAL;
    if (tb[RTA_OIF]) out.oif = ifname(static_cast<int>(nla_get_u32(tb[RTA_OIF])));
    out.src = ip_text(family, tb[RTA_PREFSRC]);
    out.gateway = ip_text(family, tb[RTA_GATEWAY]);
    if (tb[RTA_TABLE]) out.table = static_cast<int>(nla_get_u32(tb[RTA_TABLE]));
    else out.table = rm->rtm_table;
    if (tb[RTA_METRICS]) {
      for_each_nested(tb[RTA_METRICS], [&](nlattr* a) {
        if (nla_type(a) == RTAX_MTU && nla_len(a) >= 4) out.mtu = static_cast<int>(nla_get_u32(a));
      });
    }
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

std::string LibnlFabricProbe::neighbour_state(const std::string& ifn, const std::string& ip) {
  std::array<unsigned char, 16> addr{};
  const int family = parse_ip(ip, addr);
  const unsigned idx = if_nametoindex(ifn.c_str());
  if (!family || !idx) return {};
  Msg msg(nlmsg_alloc_simple(RTM_GETNEIGH, NLM_F_REQUEST));
  if (!msg) return {};
  ndmsg nd{};
  nd.ndm_family = static_cast<unsigned char>(family);
  nd.ndm_ifindex = static_cast<int>(idx);
  nlmsg_append(msg.get(), &nd, sizeof nd, NLMSG_ALIGNTO);
  nla_put(msg.get(), NDA_DST, family == AF_INET ? 4 : 16, addr.data());
  std::string state;
  transact(msg.get(), [&](nlmsghdr* h) {
    if (h->nlmsg_type != RTM_NEWNEIGH) return;
    const auto* n = static_cast<const ndmsg*>(nlmsg_data(h));
    state = nud_state_name(n->ndm_state);
  });
  return state;  // ENOENT (no entry) leaves it empty
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

VlanFacts parse_link_reply(const nlmsghdr* h, std::string (*ifname_of)(int ifindex)) {
  VlanFacts v;
  std::array<nlattr*, IFLA_MAX + 1> tb{};
  if (nlmsg_parse(const_cast<nlmsghdr*>(h), sizeof(ifinfomsg), tb.data(), IFLA_MAX, nullptr) < 0) return v;
  if (!tb[IFLA_LINKINFO]) return v;
  std::array<nlattr*, IFLA_INFO_MAX + 1> info{};
  if (nla_parse_nested(info.data(), IFLA_INFO_MAX, tb[IFLA_LINKINFO], nullptr) < 0) return v;
  if (!info[IFLA_INFO_KIND] || std::string(nla_get_string(info[IFLA_INFO_KIND])) != "vlan") return v;
  v.is_vlan = true;
  if (tb[IFLA_LINK]) v.lower = ifname_of(static_cast<int>(nla_get_u32(tb[IFLA_LINK])));
  if (!info[IFLA_INFO_DATA]) return v;
  std::array<nlattr*, IFLA_VLAN_MAX + 1> vd{};
  if (nla_parse_nested(vd.data(), IFLA_VLAN_MAX, info[IFLA_INFO_DATA], nullptr) < 0) return v;
  if (vd[IFLA_VLAN_ID]) v.id = nla_get_u16(vd[IFLA_VLAN_ID]);
  if (vd[IFLA_VLAN_EGRESS_QOS]) {
    for_each_nested(vd[IFLA_VLAN_EGRESS_QOS], [&](nlattr* a) {
      if (nla_type(a) != IFLA_VLAN_QOS_MAPPING || nla_len(a) < static_cast<int>(sizeof(ifla_vlan_qos_mapping)))
        return;
      ifla_vlan_qos_mapping q;
      std::memcpy(&q, nla_data(a), sizeof q);
      v.egress_qos[static_cast<int>(q.from)] = static_cast<int>(q.to & 7);
    });
  }
  return v;
}

VlanFacts LibnlFabricProbe::vlan(const std::string& ifn) {
  VlanFacts out;
  Msg msg(nlmsg_alloc_simple(RTM_GETLINK, NLM_F_REQUEST));
  if (!msg) return out;
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  nlmsg_append(msg.get(), &ifi, sizeof ifi, NLMSG_ALIGNTO);
  nla_put_string(msg.get(), IFLA_IFNAME, ifn.c_str());
  transact(msg.get(), [&](nlmsghdr* h) {
    if (h->nlmsg_type == RTM_NEWLINK) out = parse_link_reply(h, ifname);
  });
  return out;
}

DcbState LibnlFabricProbe::dcb(const std::string& ifn) {
  DcbState out;
  Msg msg(nlmsg_alloc_simple(RTM_GETDCB, NLM_F_REQUEST));
  if (!msg) {
    out.error = "out of memory";
    return out;
  }
  dcbmsg dm{};
  dm.dcb_family = AF_UNSPEC;
  dm.cmd = DCB_CMD_IEEE_GET;
  nlmsg_append(msg.get(), &dm, sizeof dm, NLMSG_ALIGNTO);
  nla_put_string(msg.get(), DCB_ATTR_IFNAME, ifn.c_str());
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

namespace {

#ifdef RNVME_HAVE_IBVERBS
struct DeviceListDeleter {
  void operator()(ibv_device** l) const { ibv_free_device_list(l); }
};
struct ContextDeleter {
  void operator()(ibv_context* c) const { ibv_close_device(c); }
};
#endif

// ibv_query_device's max_qp, max_cq, max_mr; false when verbs cannot open the device.
bool verbs_limits(const std::string& name, DeviceLimits& l) {
#ifdef RNVME_HAVE_IBVERBS
  int n = 0;
  std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&n));
  if (!list) return false;
  for (int i = 0; i < n; i++) {
    if (name != ibv_get_device_name(list.get()[i])) continue;
    std::unique_ptr<ibv_context, ContextDeleter> ctx(ibv_open_device(list.get()[i]));
    if (!ctx) return false;
    ibv_device_attr attr{};
    if (ibv_query_device(ctx.get(), &attr) != 0) return false;
    l.max_qp = attr.max_qp;
    l.max_cq = attr.max_cq;
    l.max_mr = attr.max_mr;
    return true;
  }
#else
  (void)name;
  (void)l;
#endif
  return false;
}

}  // namespace

DeviceLimits LibnlFabricProbe::device_limits(const RdmaDevice& dev) {
  DeviceLimits l;
  verbs_limits(dev.name, l);
  if (dev.index < 0) return l;
  // The resource summary of `rdma resource show`: entries of name and current count.
  Msg msg(nlmsg_alloc_simple(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_GET), NLM_F_REQUEST));
  if (!msg) return l;
  nla_put_u32(msg.get(), RDMA_NLDEV_ATTR_DEV_INDEX, static_cast<uint32_t>(dev.index));
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
