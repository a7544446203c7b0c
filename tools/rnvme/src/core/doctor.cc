#include "core/doctor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

namespace rnvme {
namespace {

DoctorCheck ok(std::string id, std::string subject, std::string seen) {
  return {std::move(id), std::move(subject), Severity::kOk, std::move(seen), {}, {}};
}
DoctorCheck bad(Severity sev, std::string id, std::string subject, std::string seen, std::string why,
                std::string fix) {
  return {std::move(id), std::move(subject), sev, std::move(seen), std::move(why), std::move(fix)};
}

std::string join(const std::vector<std::string>& v, std::string_view sep = ", ") {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

std::string prio_list(uint8_t bits) {
  std::vector<std::string> p;
  for (int i = 0; i < 8; i++)
    if (bits & (1u << i)) p.push_back(std::to_string(i));
  return p.empty() ? "none" : join(p, ",");
}

bool is_soft(const DoctorSnapshot& s, const std::string& dev) {
  auto it = s.software_device.find(dev);
  return it != s.software_device.end() && it->second;
}

const NetdevFacts* netdev(const DoctorSnapshot& s, const std::string& name) {
  auto it = s.netdevs.find(name);
  return it == s.netdevs.end() ? nullptr : &it->second;
}

// The RDMA ports whose netdev is `nd` (or that hold a GID of `nd`: a VLAN on the RDMA netdev).
std::vector<std::pair<const RdmaDevice*, const RdmaPort*>> ports_on(const DoctorSnapshot& s,
                                                                   const std::string& nd) {
  std::vector<std::pair<const RdmaDevice*, const RdmaPort*>> out;
  for (const auto& d : s.devices)
    for (const auto& p : d.ports) {
      bool on = p.netdev == nd;
      for (const auto& g : p.gids) on = on || g.ndev == nd;
      if (on) out.emplace_back(&d, &p);
    }
  return out;
}

// The netdev MTU a RoCE MTU needs (payload + RoCE v2 headers, 60 bytes), rounded as admins set it.
int netdev_mtu_for_roce(int roce_mtu) {
  if (roce_mtu <= 1024) return 1500;
  return roce_mtu + 104;  // 2048 -> 2152, 4096 -> 4200 (NVIDIA's figure for a 4096 RoCE MTU)
}

std::string errno_name(int err) {
  return err ? fmt::format("{} ({})", std::strerror(err), err) : std::string("no errno");
}

// The netdevs whose lossless configuration matters: the route's netdev for a target, otherwise
// every Ethernet RDMA port's netdev.
std::vector<std::string> lossless_netdevs(const DoctorSnapshot& s) {
  std::vector<std::string> out;
  if (s.target) {
    if (s.target->route.found && !s.target->route.oif.empty()) out.push_back(s.target->route.oif);
    return out;
  }
  for (const auto& d : s.devices)
    for (const auto& p : d.ports)
      if (p.link_layer != "InfiniBand" && !p.netdev.empty() &&
          std::find(out.begin(), out.end(), p.netdev) == out.end())
        out.push_back(p.netdev);
  return out;
}

// An RDMA device on `nd` is software (Soft-RoCE): a lossy link is what it is built for.
bool soft_roce_on(const DoctorSnapshot& s, const std::string& nd) {
  auto ports = ports_on(s, nd);
  if (ports.empty()) return false;
  for (const auto& [d, p] : ports)
    if (!is_soft(s, d->name)) return false;
  return true;
}

}  // namespace

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::kOk: return "ok";
    case Severity::kWarn: return "warn";
    case Severity::kFail: return "fail";
  }
  return "fail";
}

Severity DoctorReport::worst() const {
  Severity w = Severity::kOk;
  for (const auto& c : checks) w = std::max(w, c.severity);
  return w;
}

int tos_to_skb_priority(int tos) {
  // TC_PRIO_BESTEFFORT 0, BULK 2, INTERACTIVE_BULK 4, INTERACTIVE 6, per pair of IPTOS_TOS bits.
  static const int kTos2Prio[16] = {0, 0, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4};
  return kTos2Prio[(tos & 0x1e) >> 1];
}

namespace {

// PCP trust: what priority frames get without DSCP classification.
void pcp_priority(TosMapping& m, int tos, const std::map<int, int>* vlan_egress, std::string_view why) {
  if (!vlan_egress) {
    m.priority = 0;
    m.how = fmt::format("{}: untagged RoCE frames carry no PCP and land on priority 0", why);
    return;
  }
  const int skb = tos_to_skb_priority(tos);
  auto it = vlan_egress->find(skb);
  m.priority = it == vlan_egress->end() ? 0 : it->second & 7;
  m.how = fmt::format("{}: the VLAN's egress-qos-map gives skb priority {} (of tos {}) PCP {}{}", why, skb,
                      tos, *m.priority, it == vlan_egress->end() ? " (unmapped)" : "");
}

}  // namespace

TosMapping map_tos(const DcbState& dcb, int tos, const std::map<int, int>* vlan_egress) {
  TosMapping m;
  m.dscp = (tos >> 2) & 0x3f;
  if (dcb.support != DcbState::kPresent) {
    m.how = "no DCB on the netdev: no priority mapping to read";
    return m;
  }
  const bool trust_reported = !dcb.trust.empty();
  if (trust_reported && std::find(dcb.trust.begin(), dcb.trust.end(), 5) == dcb.trust.end()) {
    pcp_priority(m, tos, vlan_egress, "the trust table does not include DSCP");
    return m;
  }
  bool dscp_trust = trust_reported;
  for (const auto& a : dcb.apps) {
    if (a.selector != 5) continue;  // IEEE_8021QAZ_APP_SEL_DSCP
    dscp_trust = true;
    if (a.protocol == m.dscp) {
      m.priority = a.priority;
      m.how = fmt::format("DSCP {} -> priority {} (DCB APP table, DSCP trust)", m.dscp, a.priority);
      return m;
    }
  }
  if (dscp_trust) {
    m.how = fmt::format("DSCP trust, but the APP table has no entry for DSCP {}: the device's "
                        "default decides (mlx5: DSCP/8 = {})",
                        m.dscp, m.dscp / 8);
    return m;
  }
  pcp_priority(m, tos, vlan_egress, "PCP trust (no DSCP entries in the APP table, no trust table)");
  return m;
}

LosslessTos lossless_tos(const DcbState& dcb) {
  LosslessTos r;
  if (dcb.support != DcbState::kPresent) {
    r.how = dcb.support == DcbState::kAbsent ? "the netdev has no DCB: no lossless class"
                                             : "DCB could not be read" + (dcb.error.empty() ? std::string()
                                                                                            : ": " + dcb.error);
    return r;
  }
  if (!dcb.pfc_en) {
    r.how = "no priority has PFC: no lossless class";
    return r;
  }
  for (const auto& a : dcb.apps) {
    if (a.selector != 5 || !(dcb.pfc_en & (1u << (a.priority & 7)))) continue;
    const TosMapping m = map_tos(dcb, a.protocol << 2);
    if (m.priority && *m.priority == a.priority) {
      r.tos = a.protocol << 2;
      r.how = fmt::format("{}, which has PFC", m.how);
      return r;
    }
  }
  r.how = fmt::format("PFC on {} but no DSCP-trusted APP entry maps a DSCP to it: the ToS does not "
                      "choose the class (PCP trust)",
                      prio_list(dcb.pfc_en));
  return r;
}

// ------------------------------------------------------------------ RDMA devices and ports

void check_rdma(const DoctorSnapshot& s, std::vector<DoctorCheck>& out) {
  if (!s.devices_known) {
    out.push_back(bad(Severity::kFail, "rdma.devices", "", fmt::format("RDMA inventory unreadable: {}", s.devices_error),
                      "without ib_core's netlink and /sys/class/infiniband no RDMA transport can work",
                      "modprobe -a ib_core rdma_cm ib_uverbs"));
    return;
  }
  if (s.devices.empty()) {
    std::string nd = s.target && s.target->route.found ? s.target->route.oif : "<netdev>";
    out.push_back(bad(Severity::kFail, "rdma.devices", "", "no RDMA devices",
                      "NVMe over RDMA needs an RDMA device on the netdev that reaches the target",
                      fmt::format("load the NIC's RDMA driver (mlx5_ib, irdma, bnxt_re), or for a lab: "
                                  "rnvme rdma link add rxe0 type rxe netdev {}",
                                  nd)));
  } else {
    std::vector<std::string> names, soft;
    for (const auto& d : s.devices) {
      std::vector<std::string> nds;
      for (const auto& p : d.ports)
        if (!p.netdev.empty()) nds.push_back(p.netdev);
      names.push_back(fmt::format("{} ({}{})", d.name, is_soft(s, d.name) ? "software, " : "",
                                  nds.empty() ? "no netdev" : "on " + join(nds)));
      if (is_soft(s, d.name)) soft.push_back(d.name);
    }
    out.push_back(ok("rdma.devices", "", join(names)));
    out.push_back(ok("rdma.soft_roce", "",
                     soft.empty() ? "no software RDMA device (Soft-RoCE/siw): hardware RDMA only"
                                  : fmt::format("software RDMA present: {} (for labs and tests; no "
                                                "offload, no DCB)",
                                                join(soft))));
  }
  for (const auto& d : s.devices)
    for (const auto& p : d.ports) {
      const std::string subj = fmt::format("{}/{}", d.name, p.index);
      const std::string ll = p.link_layer.empty() ? "unknown link layer" : p.link_layer;
      if (p.state == "ACTIVE") {
        out.push_back(ok("rdma.port", subj,
                         fmt::format("ACTIVE, {}, {}, netdev {}", p.phys_state.empty() ? "?" : p.phys_state, ll,
                                     p.netdev.empty() ? "-" : p.netdev)));
      } else {
        const NetdevFacts* nd = netdev(s, p.netdev);
        std::string fix = !p.netdev.empty() && (!nd || nd->operstate != "up")
                              ? fmt::format("ip link set dev {} up", p.netdev)
                              : "check the cable and the switch port (the netdev is up, the RDMA "
                                "port is not)";
        out.push_back(bad(Severity::kFail, "rdma.port", subj,
                          fmt::format("state {}, physical state {}, {}, netdev {}",
                                      p.state.empty() ? "?" : p.state,
                                      p.phys_state.empty() ? "?" : p.phys_state, ll,
                                      p.netdev.empty() ? "-" : p.netdev),
                          "a port that is not ACTIVE carries no RDMA traffic: connects through it fail",
                          fix));
      }
      if (p.link_layer != "Ethernet" || !p.netdev_mtu) continue;
      const int allowed = roce_mtu_for_netdev_mtu(p.netdev_mtu);
      const std::string nd = p.netdev;
      if (p.active_mtu && p.active_mtu + 60 > p.netdev_mtu) {
        out.push_back(bad(
            Severity::kFail, "rdma.mtu", subj,
            fmt::format("active RDMA MTU {} but netdev {} MTU {}: a full RoCE v2 packet needs {} bytes",
                        p.active_mtu, nd, p.netdev_mtu, p.active_mtu + 60),
            "the NIC sends full-MTU RoCE packets the netdev (and the switch port configured like it) "
            "cannot carry: large transfers stall and time out while small commands work",
            fmt::format("ip link set dev {} mtu {}", nd, netdev_mtu_for_roce(p.active_mtu))));
      } else if (allowed < 1024) {
        out.push_back(bad(
            Severity::kWarn, "rdma.mtu", subj,
            fmt::format("netdev {} MTU {} is below the RDMA MTU of 1024: it limits RoCE to {}{}", nd,
                        p.netdev_mtu, allowed ? std::to_string(allowed) : std::string("nothing"),
                        p.active_mtu ? fmt::format(" (active MTU {})", p.active_mtu) : ""),
            "every 4 KiB block then needs 8 or more RoCE packets, and a peer at a 1024 MTU negotiates "
            "down to this one: throughput drops, and a fabric with mixed MTUs is hard to debug",
            fmt::format("ip link set dev {} mtu 1500", nd)));
      } else if (p.active_mtu && p.active_mtu < allowed) {
        out.push_back(bad(Severity::kWarn, "rdma.mtu", subj,
                          fmt::format("active RDMA MTU {} while netdev {} MTU {} allows {}", p.active_mtu, nd,
                                      p.netdev_mtu, allowed),
                          "a smaller RDMA MTU than the link allows costs throughput on every transfer",
                          fmt::format("check the port's RoCE MTU setting (mlx5: follows the netdev; "
                                      "ip link set dev {} mtu {} re-applies it)",
                                      nd, p.netdev_mtu)));
      } else {
        out.push_back(ok("rdma.mtu", subj,
                         p.active_mtu ? fmt::format("active RDMA MTU {} fits netdev {} MTU {}", p.active_mtu,
                                                    nd, p.netdev_mtu)
                                      : fmt::format("netdev {} MTU {} allows RoCE MTU {} (active MTU "
                                                    "unknown: no verbs access)",
                                                    nd, p.netdev_mtu, allowed)));
      }
    }
}

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

// ------------------------------------------------------------------ lossless configuration

void check_lossless(const DoctorSnapshot& s, std::vector<DoctorCheck>& out) {
  for (const auto& name : lossless_netdevs(s)) {
    const NetdevFacts* nd = netdev(s, name);
    // A netdev without RDMA carries no RoCE: target.rdma_netdev has said so already.  InfiniBand
    // (IPoIB) is lossless by its credit-based link flow control: no PFC to check.
    const auto rdma_ports = ports_on(s, name);
    if (!nd || rdma_ports.empty()) continue;
    if (std::all_of(rdma_ports.begin(), rdma_ports.end(), [](const auto& dp) { return dp.second->link_layer == "InfiniBand"; }))
      continue;
    // A VLAN has no DCB of its own: its real device's applies (and its ECN switches).
    const NetdevFacts* real = nd->vlan_of.empty() ? nd : netdev(s, nd->vlan_of);
    if (!real) real = nd;
    const DcbState& dcb = real->dcb;
    const std::string via = real != nd ? fmt::format(" (VLAN {} of {})", nd->vlan_id, real->name) : "";
    const bool soft = soft_roce_on(s, name);
    // The ToS the connection will use: --tos, else rdma_cm's default_roce_tos of the port, else 0.
    int tos = 0;
    std::string tos_from = "the RDMA CM default (0)";
    if (s.tos) {
      tos = *s.tos;
      tos_from = fmt::format("tos={}", tos);
    } else {
      for (const auto& [d, p] : ports_on(s, name)) {
        auto it = s.default_roce_tos.find(fmt::format("{}/{}", d->name, p->index));
        if (it != s.default_roce_tos.end()) {
          tos = it->second;
          tos_from = fmt::format("{}'s rdma_cm default_roce_tos ({})", it->first, tos);
          break;
        }
      }
    }
    const TosMapping m = map_tos(dcb, tos, nd->vlan_of.empty() ? nullptr : &nd->egress_qos);

    if (dcb.support == DcbState::kAbsent) {
      if (soft)
        out.push_back(ok("lossless.dcb", name,
                         fmt::format("DCB absent ({} has no DCB netlink operations): no PFC, ETS or "
                                     "DSCP map; Soft-RoCE runs over a lossy link and relies on "
                                     "retransmission",
                                     name)));
      else
        out.push_back(bad(Severity::kWarn, "lossless.dcb", name,
                          fmt::format("DCB absent: the driver of {} has no DCB netlink operations", name),
                          "without PFC (or ECN-based congestion control) RoCE drops packets under "
                          "congestion and every drop costs a retransmission timeout; this host cannot "
                          "show whether the NIC's firmware or the switch provide it",
                          "configure PFC/ECN with the NIC vendor's tool, or use a driver with DCB "
                          "support"));
      if (s.tos)
        out.push_back(bad(Severity::kWarn, "lossless.tos", name,
                          fmt::format("{} (DSCP {}): {} has no DCB, so no priority has PFC here; which "
                                      "priority the fabric gives DSCP {} is not visible from this host",
                                      tos_from, m.dscp, name, m.dscp),
                          "a ToS chosen for a lossless class is only lossless if the netdev maps it to a "
                          "priority with PFC: here nothing maps it",
                          fmt::format("configure DCB on the RoCE NIC (dcb pfc set dev {} prio-pfc 3:on; "
                                      "dcb app add dev {} dscp-prio {}:3), or drop tos= if no lossless "
                                      "class is meant",
                                      real->name, real->name, m.dscp)));
      else
        out.push_back(ok("lossless.tos", name,
                         fmt::format("{}: DSCP {}; no DCB on {}, nothing maps it to a priority", tos_from,
                                     m.dscp, name)));
      continue;
    }
    if (dcb.support == DcbState::kUnknown) {
      out.push_back(bad(Severity::kWarn, "lossless.dcb", name,
                        fmt::format("DCB state unreadable: {}", dcb.error.empty() ? "unknown" : dcb.error),
                        "PFC, ETS and the DSCP map cannot be checked",
                        "run rnvme doctor as root"));
      continue;
    }

    // DCB present.
    int dscp_entries = 0;
    for (const auto& a : dcb.apps) dscp_entries += a.selector == 5;
    std::string trust;
    for (int t : dcb.trust)
      trust += (trust.empty() ? "" : ",") + (t == 5 ? std::string("DSCP") : t == 255 ? std::string("PCP")
                                                                                      : std::to_string(t));
    out.push_back(ok("lossless.dcb", name,
                     fmt::format("DCB present{}: PFC on priorities {}, trust {} ({} DSCP entr{} in the APP "
                                 "table){}",
                                 via,
                                 dcb.has_pfc ? prio_list(dcb.pfc_en) : "unknown",
                                 !trust.empty() ? trust + " (trust table)" : dscp_entries ? "DSCP" : "PCP",
                                 dscp_entries, dscp_entries == 1 ? "y" : "ies",
                                 dcb.dcbx >= 0 ? fmt::format(", DCBX mode {:#x}", dcb.dcbx) : "")));
    if (dcb.has_pfc && dcb.pfc_en == 0)
      out.push_back(bad(Severity::kWarn, "lossless.pfc", name, "PFC is off on every priority",
                        "RoCE without PFC drops packets under congestion; that is only fine when the "
                        "NIC and the switches run ECN congestion control end to end",
                        fmt::format("dcb pfc set dev {} prio-pfc 3:on   (and the same priority on the switch "
                                    "ports)",
                                    real->name)));
    else
      out.push_back(ok("lossless.pfc", name,
                       dcb.has_pfc ? fmt::format("PFC on priorities {} (capable of {} classes)",
                                                 prio_list(dcb.pfc_en), dcb.pfc_cap)
                                   : "the driver reports no PFC configuration"));
    if (dcb.has_ets) {
      std::vector<std::string> starved;
      for (int p = 0; p < 8; p++) {
        if (!(dcb.pfc_en & (1u << p))) continue;
        const int tc = dcb.prio_tc[static_cast<size_t>(p)] & 7;
        if (dcb.tc_tsa[static_cast<size_t>(tc)] == 2 && dcb.tc_bw[static_cast<size_t>(tc)] == 0)
          starved.push_back(fmt::format("priority {} (TC {})", p, tc));
      }
      std::vector<std::string> tcs;
      for (int tc = 0; tc < 8; tc++)
        if (dcb.tc_tsa[static_cast<size_t>(tc)] == 2 && dcb.tc_bw[static_cast<size_t>(tc)])
          tcs.push_back(fmt::format("TC{} {}%", tc, dcb.tc_bw[static_cast<size_t>(tc)]));
      if (!starved.empty())
        out.push_back(bad(Severity::kWarn, "lossless.ets", name,
                          fmt::format("{} has PFC but an ETS class with 0% bandwidth", join(starved)),
                          "a lossless class with no ETS share is served only when the others are idle: "
                          "storage traffic starves under load and PFC pauses spread",
                          fmt::format("dcb ets set dev {} tc-bw <give the RoCE class e.g. 50>", real->name)));
      else
        out.push_back(ok("lossless.ets", name, tcs.empty() ? "ETS: strict priority or vendor TSA only"
                                                           : "ETS bandwidth: " + join(tcs)));
    } else {
      out.push_back(ok("lossless.ets", name, "the driver reports no ETS configuration"));
    }

    // The ToS of the connection against the PFC priorities.
    const std::string seen = fmt::format("{}: {}", tos_from, m.how);
    if (!m.priority) {
      out.push_back(bad(Severity::kWarn, "lossless.tos", name, seen,
                        "the priority of the storage traffic cannot be read, so PFC for it cannot be "
                        "confirmed",
                        fmt::format("map the DSCP explicitly: dcb app add dev {} dscp-prio {}:<PFC priority>",
                                    real->name, m.dscp)));
    } else if (dcb.pfc_en & (1u << *m.priority)) {
      out.push_back(ok("lossless.tos", name, seen + ", which has PFC"));
    } else {
      // A ToS that lands on a PFC priority, from the APP table.
      std::string good;
      for (const auto& a : dcb.apps)
        if (a.selector == 5 && (dcb.pfc_en & (1u << (a.priority & 7))) && good.empty())
          good = fmt::format("connect with tos={} (DSCP {} -> priority {}), or ", a.protocol << 2,
                             a.protocol, a.priority);
      int pfc_prio = -1;
      for (int p = 0; p < 8 && pfc_prio < 0; p++)
        if (dcb.pfc_en & (1u << p)) pfc_prio = p;
      out.push_back(bad(
          dcb.pfc_en ? Severity::kFail : Severity::kWarn, "lossless.tos", name,
          fmt::format("{}, which has no PFC (PFC on {})", seen, prio_list(dcb.pfc_en)),
          "the storage traffic runs in a lossy class while the fabric is set up lossless for another "
          "one: under congestion its packets are dropped and each drop costs a retransmission timeout",
          pfc_prio < 0 ? fmt::format("dcb pfc set dev {} prio-pfc {}:on", real->name, *m.priority)
          : !good.empty() || dscp_entries
              ? fmt::format("{}map it: dcb app add dev {} dscp-prio {}:{}", good, real->name, m.dscp, pfc_prio)
          : !nd->vlan_of.empty()
              ? fmt::format("give the connection's skb priority the PCP of priority {}: ip link set dev {} type "
                            "vlan egress-qos-map {}:{}",
                            pfc_prio, name, tos_to_skb_priority(tos), pfc_prio)
              : fmt::format("untagged frames cannot carry priority {}: send through a VLAN with egress-qos-map "
                            "{}:{}, or classify by DSCP: dcb app add dev {} dscp-prio {}:{}",
                            pfc_prio, tos_to_skb_priority(tos), pfc_prio, real->name, m.dscp, pfc_prio)));
    }

    // ECN (DCQCN) where the device exposes it.
    if (real->ecn_np.empty() && real->ecn_rp.empty()) {
      out.push_back(ok("lossless.ecn", name,
                       "RoCE ECN is not exposed in sysfs (/sys/class/net/" + real->name +
                           "/ecn): not visible from here"));
    } else {
      int prio = m.priority.value_or(-1);
      if (prio < 0)
        for (int p = 0; p < 8 && prio < 0; p++)
          if (dcb.pfc_en & (1u << p)) prio = p;
      if (prio < 0) prio = 0;
      auto on = [&](const std::map<int, bool>& mp) {
        auto it = mp.find(prio);
        return it != mp.end() && it->second;
      };
      if (on(real->ecn_np) && on(real->ecn_rp)) {
        out.push_back(ok("lossless.ecn", name,
                         fmt::format("RoCE ECN (notification and reaction point) on for priority {}", prio)));
      } else {
        out.push_back(bad(Severity::kWarn, "lossless.ecn", name,
                          fmt::format("RoCE ECN on priority {}: notification point {}, reaction point {}", prio,
                                      on(real->ecn_np) ? "on" : "off", on(real->ecn_rp) ? "on" : "off"),
                          "without ECN congestion control (DCQCN) PFC alone handles congestion: pauses "
                          "spread through the fabric (head-of-line blocking)",
                          fmt::format("echo 1 > /sys/class/net/{0}/ecn/roce_np/enable/{1}; echo 1 > "
                                      "/sys/class/net/{0}/ecn/roce_rp/enable/{1}",
                                      real->name, prio)));
      }
    }
  }
}

// ------------------------------------------------------------------ host identity

void check_host(const DoctorSnapshot& s, std::vector<DoctorCheck>& out) {
  const HostCheck hc = check_host_identity(s.host);
  struct Part {
    const char* id;
    std::string source;
    std::string value;
  };
  for (const Part& part : {Part{"host.hostnqn", s.host.hostnqn_source, hc.hostnqn},
                           Part{"host.hostid", s.host.hostid_source, hc.hostid}}) {
    std::vector<const HostProblem*> mine;
    for (const auto& p : hc.problems)
      if (p.source == part.source && p.kind != HostProblem::kMismatch) mine.push_back(&p);
    if (mine.empty()) {
      out.push_back(ok(part.id, part.source, fmt::format("{} (well formed)", part.value)));
      continue;
    }
    for (const HostProblem* p : mine) {
      // A missing file is a warning (the kernel has a default host; connect goes ahead), an
      // unusable one a failure.
      Severity sev = p->fatal && p->kind != HostProblem::kMissing ? Severity::kFail : Severity::kWarn;
      std::string why;
      switch (p->kind) {
        case HostProblem::kMissing:
          why = part.source == std::string(kHostidPath)
                    ? "tools that read only the host ID file, and the kernel's default host, then use "
                      "another host ID than this one: targets that key reservations or ACLs on the "
                      "host ID see a different host"
                    : "without a host NQN the kernel uses its default host NQN, which changes with every "
                      "boot: targets that allow only listed hosts refuse the connect after a reboot";
          break;
        case HostProblem::kUnpaired:
          why = "Linux 6.12 refuses a host NQN and host ID that do not pair up (EINVAL)";
          break;
        case HostProblem::kNonStandard:
          why = "targets and tools may reject an NQN that is not in an NVMe form";
          break;
        default:
          why = "the kernel refuses the connect with this value (EINVAL), or rnvme connect stops before it";
          break;
      }
      // hostid.cc's fix for a host ID taken from the host NQN is "nothing to do" (for connect);
      // the doctor warns, so it gives the command that makes the ID explicit.
      std::string fix = p->kind == HostProblem::kMissing && !part.value.empty()
                            ? fmt::format("echo {} > {}", part.value, part.source)
                            : p->fix;
      out.push_back(bad(sev, part.id, part.source, p->problem, why, fix));
    }
  }
  for (const auto& p : hc.problems)
    if (p.kind == HostProblem::kMismatch)
      out.push_back(ok("host.consistency", s.host.hostid_source,
                       p.problem));
  if (hc.ok() && !hc.hostnqn.empty() && !hc.hostid.empty()) {
    if (auto c = find_host_conflict(hc.hostnqn, hc.hostid, s.host_in_use)) {
      out.push_back(bad(Severity::kFail, "host.in_use", "", c->problem,
                        "the kernel keeps one host ID per host NQN across fabrics controllers", c->fix));
    } else {
      out.push_back(ok("host.in_use", "",
                       s.host_in_use.empty()
                           ? std::string("no fabrics controllers yet")
                           : fmt::format("the {} fabrics controller(s) use this identity or another host's",
                                         s.host_in_use.size())));
    }
  }
}

// ------------------------------------------------------------------ modules

void check_modules(const DoctorSnapshot& s, std::vector<DoctorCheck>& out) {
  const ModuleFacts& m = s.modules;
  const bool rnvme_rdma = m.rnvme_loaded && m.rnvme_transport_name == "rdma";
  const KernelFacts* running = nullptr;
  for (const auto& k : m.kernels)
    if (k.running) running = &k;
  const bool rnvme_installed = running && !running->rnvme_module.empty();

  // Who serves "rdma".
  if (rnvme_rdma) {
    out.push_back(ok("module.transport", "rdma", "rnvme serves the \"rdma\" transport"));
  } else if (m.nvme_rdma_loaded) {
    out.push_back(bad(Severity::kWarn, "module.transport", "rdma",
                      fmt::format("the in-tree nvme_rdma serves \"rdma\"{}",
                                  m.rnvme_loaded ? fmt::format(" (rnvme is loaded as \"{}\")", m.rnvme_transport_name)
                                                 : ", rnvme is not loaded"),
                      "connects with -t rdma use the in-tree driver, not rnvme",
                      "modprobe -r nvme_rdma && modprobe rnvme   (disconnect its controllers first)"));
  } else if (m.rnvme_loaded) {
    out.push_back(ok("module.transport", "rdma",
                     fmt::format("rnvme is loaded as transport \"{}\"; nothing serves \"rdma\" yet",
                                 m.rnvme_transport_name)));
  } else if (!m.redirect_file.empty()) {
    out.push_back(ok("module.transport", "rdma",
                     fmt::format("nothing loaded yet; the first -t rdma connect loads rnvme through {}",
                                 m.redirect_file)));
  } else if (!m.block_file.empty()) {
    out.push_back(bad(Severity::kFail, "module.transport", "rdma",
                      fmt::format("nothing serves \"rdma\" and {} blocks the in-tree nvme_rdma", m.block_file),
                      "a -t rdma connect fails: nvme-fabrics finds no transport",
                      rnvme_installed ? "modprobe rnvme"
                                      : "insmod <path>/rnvme.ko, or install it for this kernel (make "
                                        "install, or the rnvme-dkms package) and modprobe rnvme"));
  } else {
    out.push_back(bad(Severity::kWarn, "module.transport", "rdma",
                      "nothing serves \"rdma\" and no modprobe.d redirect: the first connect loads the "
                      "in-tree nvme_rdma",
                      "nvme-fabrics calls request_module(\"nvme-rdma\"), which loads the in-tree driver "
                      "unless /etc/modprobe.d redirects it",
                      rnvme_installed ? "modprobe rnvme"
                                      : "install rnvme for this kernel (the rnvme-dkms package, or make "
                                        "install and install -m 0644 tools/packaging/modprobe.d/rnvme.conf "
                                        "/etc/modprobe.d/), then modprobe rnvme"));
  }

  if (m.rnvme_loaded && m.nvme_rdma_loaded) {
    const std::string who = rnvme_rdma ? "rnvme registered \"rdma\" first and serves it; nvme_rdma is unused"
                                       : "nvme_rdma serves \"rdma\"";
    out.push_back(bad(Severity::kFail, "module.conflict", "nvme_rdma",
                      fmt::format("nvme_rdma is loaded beside rnvme: {}", who),
                      "two drivers for one transport: which one a connect gets depends on load order, "
                      "and after a reload it silently changes",
                      "modprobe -r nvme_rdma   (then keep it out: install "
                      "tools/packaging/modprobe.d/rnvme.conf as /etc/modprobe.d/rnvme.conf)"));
  } else {
    out.push_back(ok("module.conflict", "nvme_rdma",
                     m.nvme_rdma_loaded ? "nvme_rdma loaded, rnvme not" : "nvme_rdma is not loaded"));
  }

  if (!m.redirect_file.empty()) {
    out.push_back(ok("module.redirect", "/etc/modprobe.d",
                     fmt::format("{} redirects nvme-rdma to rnvme", m.redirect_file)));
  } else if (!m.block_file.empty()) {
    out.push_back(ok("module.redirect", "/etc/modprobe.d",
                     fmt::format("{} keeps the in-tree nvme_rdma from loading (no redirect to rnvme)",
                                 m.block_file)));
  } else if (m.rnvme_loaded || rnvme_installed) {
    out.push_back(bad(Severity::kWarn, "module.redirect", "/etc/modprobe.d",
                      "no /etc/modprobe.d file redirects nvme-rdma to rnvme",
                      "nvme-fabrics' request_module(\"nvme-rdma\") (any connect while rnvme is not "
                      "loaded, e.g. after a reboot) loads the in-tree driver instead of rnvme",
                      "install -m 0644 tools/packaging/modprobe.d/rnvme.conf /etc/modprobe.d/rnvme.conf   "
                      "(the rnvme-dkms package installs it)"));
  } else {
    out.push_back(ok("module.redirect", "/etc/modprobe.d", "rnvme is not installed: nothing to redirect"));
  }

  if (!m.dkms_registered) {
    out.push_back(ok("module.dkms", "",
                     rnvme_installed ? fmt::format("rnvme is not managed by DKMS ({} installed by hand)",
                                                   running->rnvme_module)
                                     : std::string("rnvme is not managed by DKMS")));
    return;
  }
  for (const auto& k : m.kernels) {
    if (!k.rnvme_module.empty() || k.dkms_built) {
      out.push_back(ok("module.dkms", k.version,
                       fmt::format("rnvme built for {}{}", k.version, k.running ? " (running)" : "")));
      continue;
    }
    std::string fix = k.headers ? fmt::format("dkms autoinstall -k {}", k.version)
                                : fmt::format("apt-get install linux-headers-{} && dkms autoinstall -k {}",
                                              k.version, k.version);
    const bool hard = k.running && !m.rnvme_loaded;
    out.push_back(bad(hard ? Severity::kFail : Severity::kWarn, "module.dkms", k.version,
                      fmt::format("no rnvme.ko for {}{}{}", k.version, k.running ? " (the running kernel)" : "",
                                  k.headers ? "" : "; its headers are not installed"),
                      k.running ? "without a module for the running kernel the modprobe.d redirect falls "
                                  "back to the in-tree nvme_rdma"
                                : "booting this kernel falls back to the in-tree nvme_rdma",
                      fix));
  }
}

// ------------------------------------------------------------------ queue budget

void check_queues(const DoctorSnapshot& s, std::vector<DoctorCheck>& out) {
  const QueueFacts& q = s.queues;
  if (q.online_cpus <= 0) return;
  // Devices that matter: the one the source GID is on, else every device.
  std::vector<std::string> devs;
  if (s.target && s.target->route.found)
    if (auto m = find_gid(s.devices, s.target->route.src)) devs.push_back(m->device->name);
  if (devs.empty())
    for (const auto& d : s.devices) devs.push_back(d.name);

  // What a connect with default options asks for: nr_io_queues = online CPUs, queue_size 128,
  // plus the admin queue (32 entries).  Each queue: one QP, one CQ (shared from the CQ pool for
  // interrupt-driven queues), one MR per queue entry.
  int granted = 0;
  if (s.target)
    for (const auto& c : q.controllers)
      if (c.traddr == s.target->traddr && (c.trsvcid.empty() || c.trsvcid == s.target->trsvcid) &&
          c.queue_count > 1)
        granted = c.queue_count - 1;
  const int io = granted ? std::min(granted, q.online_cpus) : q.online_cpus;
  const int qps = io + 1, cqs = io + 1, mrs = io * 128 + 32;
  const std::string ask =
      fmt::format("{} CPUs online: a default connect asks for {} I/O queues{}; it takes {} QPs, up to {} CQs "
                  "and {} MRs",
                  q.online_cpus, q.online_cpus,
                  granted ? fmt::format(" ({} granted {})", s.target->traddr, granted) : std::string(),
                  qps, cqs, mrs);
  for (const auto& d : devs) {
    auto it = q.limits.find(d);
    if (it == q.limits.end() || !it->second.max_qp) {
      out.push_back(ok("queues.budget", d, ask + "; device limits unknown (no verbs access)"));
      continue;
    }
    const DeviceLimits& l = it->second;
    auto left = [](int max, int used) { return used >= 0 ? max - used : max; };
    std::vector<std::string> short_of;
    if (qps > left(l.max_qp, l.used_qp)) short_of.push_back(fmt::format("QPs ({} left)", left(l.max_qp, l.used_qp)));
    if (l.max_cq && cqs > left(l.max_cq, l.used_cq))
      short_of.push_back(fmt::format("CQs ({} left)", left(l.max_cq, l.used_cq)));
    if (l.max_mr && mrs > left(l.max_mr, l.used_mr))
      short_of.push_back(fmt::format("MRs ({} left)", left(l.max_mr, l.used_mr)));
    const std::string lim = fmt::format("; {} allows {} QPs, {} CQs, {} MRs{}", d, l.max_qp, l.max_cq, l.max_mr,
                                        l.used_qp >= 0 ? fmt::format(" ({} QPs, {} CQs, {} MRs in use)", l.used_qp,
                                                                     l.used_cq, l.used_mr)
                                                       : std::string());
    if (!short_of.empty())
      out.push_back(bad(Severity::kFail, "queues.budget", d, ask + lim,
                        fmt::format("the device runs out of {}: the connect (or its reconnect) fails "
                                    "while creating queues",
                                    join(short_of)),
                        fmt::format("connect with fewer or smaller queues: --nr-io-queues {} --queue-size 32",
                                    std::max(1, std::min(io, left(l.max_qp, l.used_qp) - 1)))));
    else
      out.push_back(ok("queues.budget", d, ask + lim));
  }
}

DoctorReport run_doctor_checks(const DoctorSnapshot& s) {
  DoctorReport r;
  check_rdma(s, r.checks);
  check_target(s, r.checks);
  check_lossless(s, r.checks);
  check_host(s, r.checks);
  check_modules(s, r.checks);
  check_queues(s, r.checks);
  return r;
}

}  // namespace rnvme
