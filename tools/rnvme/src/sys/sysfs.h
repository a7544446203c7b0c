// Reading NVMe and RDMA state out of sysfs (through FileSystem, so tests use a fake tree).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/rdma.h"
#include "core/topology.h"
#include "sys/fs.h"

namespace rnvme {

inline constexpr const char* kNvmeClass = "/sys/class/nvme";
inline constexpr const char* kNvmeSubsysClass = "/sys/class/nvme-subsystem";
inline constexpr const char* kInfinibandClass = "/sys/class/infiniband";

NvmeController read_controller(const FileSystem& fs, const std::string& name);
Topology scan_topology(const FileSystem& fs);

// RDMA devices as sysfs lists them (fallback when netlink is unavailable).
std::vector<RdmaDevice> rdma_devices_from_sysfs(const FileSystem& fs);
// Adds link layer, netdev MTU, states missing from netlink and the populated GID entries.
// (The port's active MTU is in neither sysfs nor netlink: see sys/verbs.h.)
void add_rdma_sysfs_details(const FileSystem& fs, std::vector<RdmaDevice>& devs);

bool module_loaded(const FileSystem& fs, const std::string& name);

// Whether the running kernel's nvme-core does in-band authentication (DH-HMAC-CHAP): nvme_core
// holding nvme_auth (6.7+ with CONFIG_NVME_HOST_AUTH), else /boot/config-<release>
// (CONFIG_NVME_HOST_AUTH, or before 6.7 CONFIG_NVME_AUTH). nullopt when neither tells.
std::optional<bool> kernel_has_host_auth(const FileSystem& fs);

}  // namespace rnvme
