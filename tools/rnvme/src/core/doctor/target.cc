// Check family target.*: the route, next hop, RDMA netdev, source GID and path MTU to --traddr.
#include "core/doctor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/doctor/checks.h"

namespace rnvme {

using namespace doctor_detail;

namespace {

std::string errno_name(int err) {
  return err ? fmt::format("{} ({})", std::strerror(err), err) : std::string("no errno");
}

}  // namespace

// ------------------------------------------------------------------ the target address

void check_target(const DoctorSnapshot& s, std::vector<DoctorCheck>& out) {
  if (!s.target) return;
  const TargetFacts& t = *s.target;
  const RouteFacts& r = t.route;
  const std::string subj = t.traddr;
  std::string rdma_nd;
  for (const auto& d : s.devices)
    for (const auto& p : d.ports)
      if (rdma_nd.empty() && !p.netdev.empty()) rdma_nd = p.netdev;
  if (!r.found) {
    out.push_back(bad(Severity::kFail, "target.route", subj,
                      fmt::format("no route to {}: {}", t.traddr, r.error.empty() ? errno_name(r.err) : r.error),
                      "the RDMA CM resolves the target through the IP routing table: without a route "
                      "the connect fails with 'address resolution failed' before a packet leaves",
                      fmt::format("check the address; else add a route through the RDMA netdev: ip route "
                                  "add {} dev {}",
                                  t.traddr, rdma_nd.empty() ? "<rdma netdev>" : rdma_nd)));
    return;
  }
  const std::string via = r.gateway.empty() ? "on link" : "via " + r.gateway;
  if (r.oif == "lo") {
    // A warning, not a failure: a target on this host works (Soft-RoCE loops it back), it is
    // just not a fabric path.
    out.push_back(bad(Severity::kWarn, "target.route", subj,
                      fmt::format("{} is routed through lo (a local address)", t.traddr),
                      "a target on this host: Soft-RoCE carries it internally (connect and I/O "
                      "work), but no RDMA NIC and no wire are on this path, so it tests nothing of "
                      "the fabric",
                      "for a fabric path use the target's address on the fabric, or route it out "
                      "of the RDMA netdev: ip rule add pref 10 iif lo to <traddr> lookup 100; ip "
                      "route add <traddr> dev <rdma netdev> table 100"));
  } else {
    out.push_back(ok("target.route", subj,
                     fmt::format("{} {} dev {} src {}{}", t.traddr, via, r.oif, r.src.empty() ? "?" : r.src,
                                 r.table && r.table != 254 ? fmt::format(" (table {})", r.table) : "")));
  }

  // Reachability: the next hop's neighbour entry.
  const std::string hop = r.gateway.empty() ? t.traddr : r.gateway;
  if (r.neighbour == "FAILED" || r.neighbour == "INCOMPLETE") {
    out.push_back(bad(Severity::kFail, "target.reachable", subj,
                      fmt::format("next hop {} on {}: neighbour state {}", hop, r.oif, r.neighbour),
                      "the address of the next hop does not resolve to a MAC: nothing answers there, so "
                      "the connect fails with 'address resolution failed' (or times out)",
                      fmt::format("check that {} is up and on the segment of {}; then retry: ip neigh del "
                                  "{} dev {}",
                                  hop, r.oif, hop, r.oif)));
  } else {
    out.push_back(ok("target.reachable", subj,
                     r.neighbour.empty()
                         ? fmt::format("next hop {} not resolved yet (no neighbour entry); the RDMA CM "
                                       "resolves it when connecting",
                                       hop)
                         : fmt::format("next hop {} on {}: neighbour state {}", hop, r.oif, r.neighbour)));
  }
  if (r.oif == "lo") return;

  // The netdev must carry an RDMA port.
  auto ports = ports_on(s, r.oif);
  if (ports.empty()) {
    const NetdevFacts* nd = netdev(s, r.oif);
    std::string fix = nd && nd->software
                          ? fmt::format("rnvme rdma link add rxe0 type rxe netdev {}   (Soft-RoCE)", r.oif)
                          : fmt::format("load the RDMA driver of {}'s NIC (mlx5_ib, irdma, bnxt_re), or for "
                                        "a lab: rnvme rdma link add rxe0 type rxe netdev {}",
                                        r.oif, r.oif);
    out.push_back(bad(Severity::kFail, "target.rdma_netdev", subj,
                      fmt::format("the route's netdev {} has no RDMA device", r.oif),
                      "the RDMA CM binds the connection to the RDMA device of the netdev the route "
                      "picks: with none, the connect fails (ENODEV / 'address resolution failed')",
                      fix));
  } else {
    std::vector<std::string> names;
    for (const auto& [d, p] : ports) names.push_back(fmt::format("{}/{}", d->name, p->index));
    out.push_back(ok("target.rdma_netdev", subj, fmt::format("{} carries {}", r.oif, join(names))));
  }

  // The source GID the CM will use.
  const RdmaPort* port = nullptr;
  if (r.src.empty()) {
    out.push_back(bad(Severity::kWarn, "target.source_gid", subj, "the route names no source address",
                      "the RDMA CM picks the source GID from the source address",
                      "give the RDMA netdev an address: ip addr add <addr>/<len> dev " + r.oif));
  } else if (auto m = find_gid(s.devices, r.src)) {
    port = m->port;
    const bool v4 = r.src.find(':') == std::string::npos;
    // The CM takes the GID of the source address whose type is the port's default_roce_mode
    // (rdma_cm configfs; RoCE v2 unless changed).
    const std::string key = fmt::format("{}/{}", m->device->name, m->port->index);
    auto mode_it = s.default_roce_mode.find(key);
    const std::string mode = mode_it != s.default_roce_mode.end() ? mode_it->second : "RoCE v2";
    const std::string mode_note =
        mode_it != s.default_roce_mode.end() ? fmt::format("; rdma_cm default_roce_mode {}", mode) : "";
    const RdmaGid* g = m->gid;
    if (m->port->link_layer != "InfiniBand")
      for (const auto& e : m->port->gids)
        if (e.gid == m->gid->gid && e.type == mode) g = &e;
    const std::string type = gid_type_name(g->type, m->port->link_layer);
    const std::string configfs =
        fmt::format("mkdir -p /sys/kernel/config/rdma_cm/{0} && echo \"{{}}\" > "
                    "/sys/kernel/config/rdma_cm/{0}/ports/{1}/default_roce_mode",
                    m->device->name, m->port->index);
    const std::string seen =
        fmt::format("source {} is GID index {} of {} ({}, {}, netdev {}){}", r.src, g->index, key,
                    type.empty() ? "type unknown" : type, v4 ? "IPv4-mapped" : "IPv6",
                    g->ndev.empty() ? "-" : g->ndev, mode_note);
    if (m->port->link_layer == "InfiniBand" || (g->type == mode && mode == "RoCE v2")) {
      out.push_back(ok("target.source_gid", subj, seen));
    } else if (g->type == mode) {
      out.push_back(bad(Severity::kWarn, "target.source_gid", subj, seen,
                        "the CM uses RoCE v1, which is not routable (no IP header): it works only inside "
                        "one L2 domain",
                        fmt::format(fmt::runtime(configfs), "RoCE v2")));
    } else {
      out.push_back(bad(Severity::kFail, "target.source_gid", subj,
                        fmt::format("source {} has only a {} GID (index {} of {}) and the RDMA CM looks for "
                                    "a {} one{}",
                                    r.src, type, g->index, key, mode, mode_note),
                        "the RDMA CM finds no GID of its type for the source address and the connect fails "
                        "(address resolution: ENODEV)",
                        mode == "RoCE v2"
                            ? fmt::format("enable RoCE v2 on {} (its firmware/driver setting); only inside one "
                                          "L2 domain: {}",
                                          m->device->name, fmt::format(fmt::runtime(configfs), "IB/RoCE v1"))
                            : fmt::format(fmt::runtime(configfs), "RoCE v2")));
    }
  } else {
    out.push_back(bad(Severity::kFail, "target.source_gid", subj,
                      fmt::format("no RDMA device has a GID for the source address {}", r.src),
                      "the RDMA CM sends from the GID of the source address: without one it cannot "
                      "build the path, and the connect fails",
                      ports.empty()
                          ? fmt::format("attach an RDMA device to {} (see target.rdma_netdev)", r.oif)
                          : fmt::format("the GID table follows the netdev's addresses: check that {} is "
                                        "configured on {} (ip addr add {}/<len> dev {})",
                                        r.src, r.oif, r.src, r.oif)));
  }
  if (!port && !ports.empty()) port = ports.front().second;

  // MTU along the path, as far as this host sees it: the route's MTU metric and the netdev.
  const NetdevFacts* nd = netdev(s, r.oif);
  const int nd_mtu = nd ? nd->mtu : 0;
  const int path = r.mtu ? (nd_mtu ? std::min(r.mtu, nd_mtu) : r.mtu) : nd_mtu;
  const int rdma_mtu = port ? (port->active_mtu ? port->active_mtu
                                                : (path ? roce_mtu_for_netdev_mtu(path) : 0))
                            : 0;
  const std::string what =
      fmt::format("netdev {} MTU {}{}", r.oif, nd_mtu ? std::to_string(nd_mtu) : std::string("?"),
                  r.mtu ? fmt::format(", route MTU {}", r.mtu) : std::string(", no route MTU"));
  if (path && rdma_mtu && rdma_mtu + 60 > path) {
    out.push_back(bad(Severity::kWarn, "target.path_mtu", subj,
                      fmt::format("{}: RDMA MTU {} needs {} bytes per packet", what, rdma_mtu, rdma_mtu + 60),
                      "RoCE packets larger than the path MTU are dropped (RoCE does not fragment); the "
                      "route's MTU says a hop on the way is smaller",
                      r.mtu ? fmt::format("fix the hop's MTU, or lower the netdev to it: ip link set dev {} "
                                          "mtu {}",
                                          r.oif, r.mtu)
                            : fmt::format("ip link set dev {} mtu {}", r.oif, netdev_mtu_for_roce(rdma_mtu))));
  } else {
    out.push_back(ok("target.path_mtu", subj,
                     fmt::format("{}{}; hops beyond this host are not visible", what,
                                 rdma_mtu ? fmt::format(", RDMA MTU {} fits", rdma_mtu) : "")));
  }
}

}  // namespace rnvme
