#include "sys/route.h"
#include "core/ip.h"
#include "sys/nl_handles.h"

#include <fmt/format.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <cstring>

namespace rnvme {

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
    out.gateway = nl::address_text(rtnl_route_nh_get_gateway(nh));
  }
  out.src = nl::address_text(rtnl_route_get_pref_src(route.get()));
  // rt_fill_info (net/ipv4/route.c) puts the source ip_route_output_key picked in RTA_PREFSRC
  // unless it is the request's RTA_SRC (none here): without it an IPv4 answer to an output lookup
  // (no RTA_IIF) says 0.0.0.0, no address to send from.  IPv6's rt6_fill_node leaves it out when
  // ip6_route_get_saddr finds no source (a connect fails with EADDRNOTAVAIL): src stays empty.
  const bool output = rtnl_route_get_iif(route.get()) <= 0;
  if (out.src.empty() && output && rtnl_route_get_family(route.get()) == AF_INET) out.src = "0.0.0.0";
  out.table = static_cast<int>(rtnl_route_get_table(route.get()));  // RTA_TABLE, else rtm_table
  if (uint32_t mtu = 0; rtnl_route_get_metric(route.get(), RTAX_MTU, &mtu) == 0)
    out.mtu = static_cast<int>(mtu);
  return out;
}

RouteFacts lookup_route(const std::string& dst) {
  RouteFacts out;
  nl::Addr addr = nl::address(dst);
  if (!addr) {
    const bool ip = is_ip_address(dst);
    out.err = ip ? 0 : EINVAL;
    out.error = ip ? "out of memory" : "not an IP address: " + dst;
    return out;
  }
  // libnl's request for the lookup (what rtnl_route_lookup sends: RTA_DST only, no RTA_SRC,
  // RTA_IIF or RTA_OIF, so the kernel routes it as output from this host, as the RDMA CM does),
  // with RTM_F_LOOKUP_TABLE to report the table the lookup used, not "main"; sent through
  // nl::query, which keeps the errno.
  nl::Route tmpl(rtnl_route_alloc());
  nl::Msg msg(nlmsg_alloc_simple(RTM_GETROUTE, NLM_F_REQUEST));
  if (!tmpl || !msg || rtnl_route_set_dst(tmpl.get(), addr.get()) < 0) {
    out.error = "out of memory";
    return out;
  }
  rtnl_route_set_flags(tmpl.get(), RTM_F_LOOKUP_TABLE);
  if (int rc = rtnl_route_build_msg(msg.get(), tmpl.get()); rc < 0) {
    out.error = fmt::format("route request: {}", nl_geterror(rc));
    return out;
  }
  nl::Reply r = nl::query(msg.get(), [&](nlmsghdr* h) {
    if (RouteFacts f = parse_route_reply(h, nl::ifname); f.found) out = f;
  });
  if (r.err) {
    out = RouteFacts{};
    out.err = r.err;
    out.error = std::strerror(r.err);
  } else if (!r.failure.empty()) {
    out = RouteFacts{};
    out.error = r.failure;
  } else if (!out.found) {
    out.error = "the kernel sent no route";
  }
  return out;
}

Result<std::string> RealNetProbe::source_for(const std::string& dst) {
  if (!is_ip_address(dst)) return make_error(ErrorCode::kUsage, "not an IP address: " + dst);
  RouteFacts r = lookup_(dst);
  if (r.found && !r.src.empty()) return r.src;
  // A route without a source (IPv6): what connect() and the RDMA CM's ipv6_dst_lookup_flow fail
  // with.  No route: the kernel's errno; a local failure (netlink) has none.
  const int err = r.found ? EADDRNOTAVAIL : r.err;
  Error e = make_error(ErrorCode::kFailure,
                       r.found ? fmt::format("no source address for {}: {}", dst, std::strerror(err))
                               : fmt::format("no route to {}: {}", dst, r.error));
  e.sys_errno = err;
  return e;
}

bool RealNetProbe::is_local(const std::string& ip) {
  RouteFacts r = lookup_(ip);
  return r.found && r.local;
}

}  // namespace rnvme
