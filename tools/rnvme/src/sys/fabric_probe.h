// What `rnvme doctor` asks the kernel beyond sysfs.  Route netlink (NETLINK_ROUTE) through
// libnl-route: the route the RDMA CM would take to an address (RTM_GETROUTE: sys/route.h's
// lookup_route, the tool's one route lookup), the next hop's neighbour state (the neighbour
// cache) and whether a netdev is a VLAN (rtnl_link); a netdev's IEEE DCB configuration
// (RTM_GETDCB, DCB_CMD_IEEE_GET: PFC, ETS, APP table) with raw libnl messages, as libnl has no
// DCB support.  RDMA netlink (RDMA_NLDEV_CMD_RES_GET, raw messages) for the resources in use and
// verbs (ibv_query_device) for a device's limits.
#pragma once

#include <linux/netlink.h>

#include <map>
#include <string>

#include "core/host_facts.h"
#include "core/rdma.h"
#include "core/result.h"

struct nl_cache;

namespace rnvme {

class FabricProbe {
 public:
  virtual ~FabricProbe() = default;
  // found=false with err/error when the kernel has no route (lookup_route in LibnlFabricProbe).
  virtual RouteFacts route_to(const std::string& dst) = 0;
  // NUD state name of `addr` on `ifname` ("REACHABLE", "PERMANENT", "FAILED", ...); empty: none.
  virtual std::string neighbour_state(const std::string& ifname, const std::string& addr) = 0;
  virtual DcbState dcb(const std::string& ifname) = 0;
  // Whether `ifname` is a VLAN, of which device, with which egress-qos-map (RTM_GETLINK).
  virtual VlanFacts vlan(const std::string& ifname) = 0;
  // max_* from verbs (0 when unknown), used_* from the RDMA netlink resource summary (-1).
  virtual DeviceLimits device_limits(const RdmaDevice& dev) = 0;
};

class LibnlFabricProbe final : public FabricProbe {
 public:
  RouteFacts route_to(const std::string& dst) override;
  std::string neighbour_state(const std::string& ifname, const std::string& addr) override;
  DcbState dcb(const std::string& ifname) override;
  VlanFacts vlan(const std::string& ifname) override;
  DeviceLimits device_limits(const RdmaDevice& dev) override;
};

class FakeFabricProbe final : public FabricProbe {
 public:
  RouteFacts route_to(const std::string& dst) override {
    auto it = routes.find(dst);
    if (it != routes.end()) return it->second;
    RouteFacts r;
    r.err = 101;  // ENETUNREACH
    r.error = "Network is unreachable";
    return r;
  }
  std::string neighbour_state(const std::string& ifname, const std::string& addr) override {
    auto it = neighbours.find(ifname + " " + addr);
    return it == neighbours.end() ? std::string() : it->second;
  }
  DcbState dcb(const std::string& ifname) override {
    auto it = dcbs.find(ifname);
    if (it != dcbs.end()) return it->second;
    DcbState d;
    d.support = DcbState::kAbsent;
    return d;
  }
  VlanFacts vlan(const std::string& ifname) override {
    auto it = vlans.find(ifname);
    return it == vlans.end() ? VlanFacts{} : it->second;
  }
  DeviceLimits device_limits(const RdmaDevice& dev) override {
    auto it = limits.find(dev.name);
    return it == limits.end() ? DeviceLimits{} : it->second;
  }
  std::map<std::string, RouteFacts> routes;        // dst -> route
  std::map<std::string, std::string> neighbours;   // "ifname addr" -> state
  std::map<std::string, DcbState> dcbs;            // ifname -> DCB (absent when not listed)
  std::map<std::string, DeviceLimits> limits;      // RDMA device -> limits
  std::map<std::string, VlanFacts> vlans;          // ifname -> VLAN (not a VLAN when not listed)
};

// Parsers of the kernel's replies, separate so tests feed them messages built byte by byte.
// `h` is one RTM_GETDCB reply (struct dcbmsg + attributes).
DcbState parse_dcb_ieee_reply(const nlmsghdr* h);
// One RTM_NEWLINK reply (libnl-route's link parser); `lower` is named through `ifname_of`.
VlanFacts parse_link_reply(const nlmsghdr* h, std::string (*ifname_of)(int ifindex));
// The NUD state name of `addr` on `ifindex` in a libnl neighbour cache ("route/neigh"); empty
// when it has no entry for it.
std::string neighbour_in(nl_cache* neighbours, int ifindex, const std::string& addr);
// DCB_ATTR_DCB_APP_TRUST_TABLE of enum ieee_attrs (Linux 6.3+), numbered here for older headers.
inline constexpr int kDcbAttrTrustTable = 11;
// The name of a NUD_* state bit ("REACHABLE"...).
std::string nud_state_name(int state);

}  // namespace rnvme
