// `rnvme doctor`: checks of an RDMA storage host, each with an id, a severity, what was seen, why it
// matters and the command that fixes it.  Pure: every fact comes in a DoctorSnapshot that
// sys/doctor_facts.cc reads (netlink, sysfs, /etc) and tests build or load from a recorded JSON
// fixture (testdata/doctor/).  The checks live in core/doctor/, one file per family.
// Documentation/doctor-checks.rst describes every check id.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/host_facts.h"
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
// DcbState, NetdevFacts, VlanFacts, RouteFacts, KernelFacts, ModuleFacts and DeviceLimits are in
// core/host_facts.h.

struct TargetFacts {
  std::string traddr;
  std::string trsvcid = "4420";
  RouteFacts route;
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

// An NVMe subsystem with rnvme controllers (those with /sys/class/nvme/nvmeN/rnvme/): its paths
// and what each reports of the failover hold.  Two or more controllers: a multipath subsystem.
struct RnvmePath {
  std::string name;                        // nvme0
  std::optional<int64_t> cqt_ms;           // rnvme/cqt_ms; nullopt: absent (rnvme.ko without the hold)
  std::optional<int64_t> failover_hold_ms; // rnvme/failover_hold_ms
  std::optional<int64_t> ccr_offered;      // rnvme/ccr_offered: 1 when the controller has a CCR identity
};
struct RnvmeSubsystem {
  std::string name;   // nvme-subsys0
  std::string nqn;
  std::vector<RnvmePath> controllers;
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
  std::vector<RnvmeSubsystem> subsystems;
};

DoctorReport run_doctor_checks(const DoctorSnapshot& s);

// Individual groups (each appends to `out`), exposed for tests.
void check_rdma(const DoctorSnapshot& s, std::vector<DoctorCheck>& out);
void check_target(const DoctorSnapshot& s, std::vector<DoctorCheck>& out);
void check_lossless(const DoctorSnapshot& s, std::vector<DoctorCheck>& out);
void check_host(const DoctorSnapshot& s, std::vector<DoctorCheck>& out);
void check_modules(const DoctorSnapshot& s, std::vector<DoctorCheck>& out);
void check_queues(const DoctorSnapshot& s, std::vector<DoctorCheck>& out);
void check_multipath(const DoctorSnapshot& s, std::vector<DoctorCheck>& out);

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
