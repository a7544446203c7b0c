// Check family lossless.*: DCB, PFC, ETS, the connection's ToS and ECN on the RoCE netdevs.
#include "core/doctor.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/doctor/checks.h"

namespace rnvme {

using namespace doctor_detail;

namespace {

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

}  // namespace rnvme
