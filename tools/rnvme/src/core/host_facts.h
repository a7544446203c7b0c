// Plain facts about this host's network, RDMA devices and kernel modules, as the sys/ readers
// return them (sys/fabric_probe.h: route, neighbour, DCB, VLAN, device limits; sys/doctor_facts.h:
// netdevs and modules).  No behaviour: `rnvme doctor` (core/doctor.h) checks them, `rnvme tune`
// reads DCB.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rnvme {

// DCB netlink (RTM_GETDCB, DCB_CMD_IEEE_GET) of one netdev.
struct DcbApp {
  int selector = 0;  // IEEE_8021QAZ_APP_SEL_*: 5 = DSCP, 1 = ethertype, 3 = UDP/DCCP port
  int priority = 0;
  int protocol = 0;  // DSCP value for selector 5
};
struct DcbState {
  // kAbsent: the driver has no DCB netlink operations (EOPNOTSUPP: veth, Soft-RoCE's netdev,
  // virtio); kUnknown: the query failed otherwise (error says why, e.g. EPERM).
  enum Support { kUnknown, kAbsent, kPresent };
  Support support = kUnknown;
  std::string error;
  bool has_pfc = false;
  int pfc_cap = 0;       // traffic classes that can have PFC
  uint8_t pfc_en = 0;    // bit p: PFC on priority p
  bool has_ets = false;
  std::array<int, 8> prio_tc{};  // priority -> traffic class
  std::array<int, 8> tc_tsa{};   // IEEE_8021QAZ_TSA_*: 0 strict, 2 ETS, 255 vendor
  std::array<int, 8> tc_bw{};    // ETS bandwidth percent per traffic class
  std::vector<DcbApp> apps;      // the APP table (DSCP -> priority entries among them)
  // The trust table (DCB_ATTR_DCB_APP_TRUST_TABLE, Linux 6.3+, drivers with getapptrust):
  // selectors the port classifies by, in precedence order (5 DSCP, 255 PCP); empty: not
  // reported, then trust is inferred from the APP table.
  std::vector<int> trust;
  int dcbx = -1;                 // DCB_ATTR_DCBX bits, -1 unknown
};

struct NetdevFacts {
  std::string name;
  int ifindex = 0;
  int mtu = 0;
  std::string operstate;   // sysfs operstate: "up", "down", "unknown"
  bool software = false;   // no /sys/class/net/X/device: veth, bridge, bond, vlan...
  DcbState dcb;
  // RoCE ECN as mlx5 (MLNX_OFED) exposes it: /sys/class/net/X/ecn/roce_{np,rp}/enable/<prio>.
  // Empty: the device exposes no ECN switch there.
  std::map<int, bool> ecn_np, ecn_rp;
  // A VLAN (RTM_GETLINK, IFLA_INFO_KIND "vlan"): its real device (whose DCB applies), its id and
  // its egress-qos-map (skb priority -> PCP), which gives RoCE frames their PCP.
  std::string vlan_of;
  int vlan_id = 0;
  std::map<int, int> egress_qos;
};

struct VlanFacts {
  bool is_vlan = false;
  std::string lower;
  int id = 0;
  std::map<int, int> egress_qos;
};

struct RouteFacts {
  bool found = false;
  int err = 0;               // errno of the lookup (ENETUNREACH, EHOSTUNREACH, ...)
  std::string error;
  std::string oif;           // the netdev the RDMA CM resolves the address to
  std::string src;           // source the kernel picks (RTA_PREFSRC); none: 0.0.0.0, IPv6 empty
  std::string gateway;       // empty: on link
  int mtu = 0;               // RTAX_MTU of the route, 0: none (netdev MTU applies)
  int table = 0;
  std::string neighbour;     // NUD state of the next hop: "REACHABLE", "FAILED", ...; empty: none
  bool local = false;        // the target address is configured on this host
};

struct KernelFacts {
  std::string version;
  bool running = false;
  bool headers = false;          // /lib/modules/V/build exists
  std::string rnvme_module;      // path of an installed rnvme.ko, empty: none
  bool dkms_built = false;       // /var/lib/dkms/rnvme/*/V/ has a built module
};

struct ModuleFacts {
  bool rnvme_loaded = false;
  bool nvme_rdma_loaded = false;
  bool nvme_fabrics_loaded = false;
  std::string rnvme_transport_name = "rdma";  // /sys/module/rnvme/parameters/transport_name
  // /sys/module/rnvme/parameters/failover_hold (Y/N); nullopt when rnvme is not loaded or has no
  // such parameter (an rnvme.ko older than the failover hold).
  std::optional<bool> rnvme_failover_hold;
  // /etc/modprobe.d: the file with an "install nvme-rdma ... rnvme" redirect, a file that blocks
  // the in-tree module ("install nvme-rdma /bin/true", "blacklist nvme_rdma"), or neither.
  std::string redirect_file;
  std::string block_file;
  bool dkms_registered = false;  // /var/lib/dkms/rnvme exists
  std::vector<std::string> dkms_versions;
  std::vector<KernelFacts> kernels;
};

struct DeviceLimits {
  int max_qp = 0, max_cq = 0, max_mr = 0;   // 0: unknown (verbs unavailable)
  int used_qp = -1, used_cq = -1, used_mr = -1;  // RDMA netlink resource summary; -1 unknown
};

}  // namespace rnvme
