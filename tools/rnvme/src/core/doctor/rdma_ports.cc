// Check family rdma.*: RDMA devices, their ports and MTUs.
#include "core/doctor.h"

#include <fmt/format.h>

#include "core/doctor/checks.h"

namespace rnvme {

using namespace doctor_detail;

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

}  // namespace rnvme
