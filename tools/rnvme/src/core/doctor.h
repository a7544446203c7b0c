// `rnvme doctor`: checks of an RDMA storage host, each with an id, a severity, what was seen, why it
// matters and the command that fixes it.  Pure: every fact comes in a DoctorSnapshot that
// cmd/doctor.cc gathers (netlink, sysfs, /etc) and tests build or load from a recorded JSON
// fixture (testdata/doctor/).  Documentation/doctor-checks.rst describes every check id.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/hostid.h"
#include "core/rdma.h"
#include "core/result.h"

namespace rnvme {

enum class Severity { kOk = 0, kWarn = 1, kFail = 2 };
std::string_view severity_name(Severity s);  // "ok", "warn", "fail"

struct DoctorCheck {
  std::string id;        // stable, dotted: "rdma.mtu"; see Documentation/doctor-checks.rst
  std::string subject;   // what it is about: "rxe0/1", "veth0", "/etc/nvme/hostid"; may be empty
  Severity severity = Severity::kOk;
  std::string seen;      // what was found
  std::string why;       // why it matters (empty for ok)
  std::string fix;       // the command that fixes it (empty for ok)
};

struct DoctorReport {
  std::vector<DoctorCheck> checks;
  Severity worst() const;
  int exit_status() const { return static_cast<int>(worst()); }  // 0 ok, 1 warn, 2 fail
};

// ---------------------------------------------------------------- the facts

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
  std::string src;           // preferred source (RTA_PREFSRC) or the address the socket gets
  std::string gateway;       // empty: on link
  int mtu = 0;               // RTAX_MTU of the route, 0: none (netdev MTU applies)
  int table = 0;
  std::string neighbour;     // NUD state of the next hop: "REACHABLE", "FAILED", ...; empty: none
  bool local = false;        // the target address is configured on this host
};

struct TargetFacts {
  std::string traddr;
  std::string trsvcid = "4420";
  RouteFacts route;
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

struct ControllerQueues {
  std::string name;         // nvme0
  std::string traddr;
  std::string trsvcid;
  int queue_count = 0;      // admin + I/O queues granted
  int sqsize = 0;
};

struct QueueFacts {
  int online_cpus = 0;
  std::map<std::string, DeviceLimits> limits;   // RDMA device name -> limits
  std::vector<ControllerQueues> controllers;    // existing fabrics controllers (rdma)
};

struct DoctorSnapshot {
  std::string source;                   // where the facts come from (fixtures cite documents)
  bool devices_known = true;
  std::string devices_error;
  std::vector<RdmaDevice> devices;
  std::map<std::string, bool> software_device;  // RDMA device -> no parent device (rxe, siw)
  std::map<std::string, NetdevFacts> netdevs;   // the RDMA netdevs and the route's netdev
  std::optional<TargetFacts> target;
  std::optional<int> tos;                        // --tos given to the doctor (as connect would)
  std::map<std::string, int> default_roce_tos;   // "rxe0/1" -> rdma_cm configfs default_roce_tos
  std::map<std::string, std::string> default_roce_mode;  // "rxe0/1" -> "RoCE v2" / "IB/RoCE v1"
  HostIdentityInput host;
  std::vector<HostInUse> host_in_use;
  ModuleFacts modules;
  QueueFacts queues;
};

DoctorReport run_doctor_checks(const DoctorSnapshot& s);

// Individual groups (each appends to `out`), exposed for tests.
void check_rdma(const DoctorSnapshot& s, std::vector<DoctorCheck>& out);
void check_target(const DoctorSnapshot& s, std::vector<DoctorCheck>& out);
void check_lossless(const DoctorSnapshot& s, std::vector<DoctorCheck>& out);
void check_host(const DoctorSnapshot& s, std::vector<DoctorCheck>& out);
void check_modules(const DoctorSnapshot& s, std::vector<DoctorCheck>& out);
void check_queues(const DoctorSnapshot& s, std::vector<DoctorCheck>& out);

// The priority traffic with `tos` lands on, as far as DCB tells: DSCP trust (the trust table
// lists DSCP, or without one the APP table has DSCP entries) maps tos >> 2 through the APP
// table; otherwise (PCP trust) untagged frames land on priority 0, and on a VLAN the RDMA CM
// gives them the PCP of the VLAN's egress-qos-map for rt_tos2priority(tos) (cma.c,
// iboe_tos_to_sl).  nullopt: cannot tell (DSCP trust without an entry for that DSCP).
struct TosMapping {
  int dscp = 0;
  std::optional<int> priority;
  std::string how;   // "DSCP 26 -> priority 3 (APP table)", ...
};
TosMapping map_tos(const DcbState& dcb, int tos, const std::map<int, int>* vlan_egress = nullptr);
// A ToS whose RoCE traffic lands on a PFC-enabled priority of `dcb`, read as map_tos() reads it:
// under DSCP trust, the first APP entry (selector DSCP) whose priority has PFC; `how` says which.
// nullopt, with `how` saying why, when no ToS reaches a lossless class (no DCB, no PFC, or PCP
// trust, where the ToS does not choose the priority of untagged frames).
struct LosslessTos {
  std::optional<int> tos;
  std::string how;
};
LosslessTos lossless_tos(const DcbState& dcb);
// The kernel's rt_tos2priority(): the skb priority of a ToS (ip_tos2prio, net/ipv4/route.c).
int tos_to_skb_priority(int tos);

// Snapshot <-> JSON: `rnvme doctor --dump-snapshot` records one, fixtures are such files.
nlohmann::json snapshot_to_json(const DoctorSnapshot& s);
Result<DoctorSnapshot> snapshot_from_json(const nlohmann::json& j);

}  // namespace rnvme
