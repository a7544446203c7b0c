// The route to an address: the kernel's answer to RTM_GETROUTE (route netlink, libnl-route), the
// tool's one route lookup.  doctor reads all of it (FabricProbe::route_to); connect's failure
// diagnosis (cmd/context, core/explain) the source address and whether an address is this host's,
// through NetProbe.
#pragma once

#include <linux/netlink.h>

#include <map>
#include <set>
#include <string>

#include "core/host_facts.h"
#include "core/result.h"

namespace rnvme {

// The route the RDMA CM takes to `dst` (addr.c: ip_route_output_key, ipv6_dst_lookup_flow; no
// source address, no bound netdev), from RTM_GETROUTE with RTM_F_LOOKUP_TABLE.  found=false with
// err, the kernel's errno (ENETUNREACH, EHOSTUNREACH, EACCES for prohibit, EINVAL for blackhole),
// and error; err=EINVAL for text that is not an IP address; err=0 with error for a local failure.
// `src` is the source address the kernel picked: IPv4 "0.0.0.0" when it found none to pick, IPv6
// empty when it found none (a connect would fail with EADDRNOTAVAIL).
RouteFacts lookup_route(const std::string& dst);

// One RTM_NEWROUTE reply to RTM_GETROUTE (libnl-route's rtnl_route_parse); found=false when it
// is not one; `oif` is named through `ifname_of` (if_indextoname on the host); `src` is the
// reply's RTA_PREFSRC; without one "0.0.0.0" in an IPv4 answer to an output lookup, else empty.
RouteFacts parse_route_reply(const nlmsghdr* h, std::string (*ifname_of)(int ifindex));

class NetProbe {
 public:
  virtual ~NetProbe() = default;
  // The source address of the route to `dst`; an Error with sys_errno (ENETUNREACH) if none.
  virtual Result<std::string> source_for(const std::string& dst) = 0;
  virtual bool is_local(const std::string& ip) = 0;
};

// Both answers from one route lookup (lookup_route; tests hand in another): the route's source
// address, and whether the route is RTN_LOCAL (the address is configured on this host).  As in
// the RDMA CM's lookup, and unlike a UDP socket's connect() and bind(): a link-local address needs
// no scope id, a broadcast or multicast address is not local, and an IPv4-mapped IPv6 address is
// routed as IPv6.
class RealNetProbe final : public NetProbe {
 public:
  using Lookup = RouteFacts (*)(const std::string& dst);
  explicit RealNetProbe(Lookup lookup = lookup_route) : lookup_(lookup) {}
  Result<std::string> source_for(const std::string& dst) override;
  bool is_local(const std::string& ip) override;

 private:
  Lookup lookup_;
};

class FakeNetProbe final : public NetProbe {
 public:
  Result<std::string> source_for(const std::string& dst) override {
    auto it = routes.find(dst);
    if (it != routes.end()) return it->second;
    Error e = make_error(ErrorCode::kFailure, "no route to " + dst);
    e.sys_errno = 101;  // ENETUNREACH
    return e;
  }
  bool is_local(const std::string& ip) override { return local.count(ip) > 0; }
  std::map<std::string, std::string> routes;  // dst -> source address
  std::set<std::string> local;
};

}  // namespace rnvme
