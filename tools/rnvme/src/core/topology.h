// NVMe subsystems, controllers and namespaces as `list` reports them (read from sysfs).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/options.h"

namespace rnvme {

struct NvmeNamespace {
  std::string name;        // nvme0n1, or nvme0c0n1 for a multipath path
  std::string dev_path;    // /dev/nvme0n1, empty for hidden paths
  uint32_t nsid = 0;
  uint64_t size_bytes = 0;
  uint32_t block_size = 0;
};

struct NvmeController {
  std::string name;        // nvme0
  int instance = -1;
  std::string transport;
  std::string address;     // raw sysfs "address"
  std::string traddr, trsvcid, host_traddr;
  std::string state;
  std::string subsysnqn;
  std::string hostnqn, hostid;
  std::optional<int> cntlid;
  std::optional<int> queue_count;   // admin + I/O queues
  std::optional<int> sqsize;
  std::optional<int> ctrl_loss_tmo;   // seconds; nullopt: "off"/absent
  std::optional<int> reconnect_delay;
  std::optional<int> fast_io_fail_tmo;
  std::vector<NvmeNamespace> paths;   // namespaces reached through this controller
  // rnvme.ko's per-controller state (/sys/class/nvme/nvmeN/rnvme/: error_recoveries,
  // reconnect_attempts, last_error, rdma_device, ...); empty for other transports.
  std::map<std::string, std::string> rnvme;
};

struct NvmeSubsystem {
  std::string name;        // nvme-subsys0
  std::string nqn;
  std::vector<NvmeController> controllers;
  std::vector<NvmeNamespace> namespaces;  // multipath heads (/dev/nvmeXnY)
};

struct Topology {
  std::vector<NvmeSubsystem> subsystems;
};

// The controller that already serves the association `o` describes, or nullptr: same transport,
// traddr, trsvcid (4420 when unset), subsystem NQN and host NQN, the same host ID when both are
// known, and the same host_traddr when `o` gives one; a controller being deleted or dead does
// not count.  These are the fields nvmf_ip_options_match() compares (strings as written, like
// the kernel's strcmp), with nvme-cli's leniency for an unset host_traddr.  An unknown host NQN
// (the kernel's default host) matches nothing: the caller cannot tell whose controller it is.
const NvmeController* find_association(const Topology& t, const ConnectOptions& o);

// "traddr=10.0.0.1,trsvcid=4420,src_addr=10.0.0.2" -> {traddr: .., trsvcid: .., src_addr: ..}.
std::map<std::string, std::string> parse_address(std::string_view address);
// "nvme12" -> 12, "nvme0n1" -> nullopt.
std::optional<int> controller_instance(std::string_view name);
bool is_namespace_name(std::string_view name);   // nvme0n1 or nvme0c1n1
bool is_controller_name(std::string_view name);  // nvme0 .. nvme999999
std::optional<int> parse_int(std::string_view s);  // tolerant of a trailing newline; "off" -> nullopt

}  // namespace rnvme
