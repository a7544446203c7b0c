// What `rnvme doctor` reads from this host: sysfs (netdevs, RDMA devices, CPUs, modules),
// rdma_cm's configfs, /etc/nvme, modprobe.d, /lib/modules and /var/lib/dkms through FileSystem
// (tests use FakeFileSystem); routes (their source address included), neighbours, DCB, VLANs and
// device limits through a FabricProbe.  cmd/doctor.cc hands the result to core/doctor.h's checks.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/doctor.h"
#include "core/host_facts.h"
#include "core/rdma.h"
#include "core/result.h"
#include "sys/fabric_probe.h"
#include "sys/fs.h"

namespace rnvme {

// What to look at besides the host itself (doctor's --traddr, --trsvcid, --tos).
struct DoctorQuery {
  std::string traddr;       // empty: no target
  std::string trsvcid;      // empty: the default (4420)
  std::optional<int> tos;   // the tos= the connection will use; unset: rdma_cm's default
};

// The facts the checks need.  `devices` is the RDMA inventory (cmd's rdma_inventory()), or why it
// could not be read.
DoctorSnapshot read_doctor_snapshot(const FileSystem& fs, FabricProbe& probe,
                                    Result<std::vector<RdmaDevice>> devices, const DoctorQuery& q);

// One netdev: MTU, ifindex, operstate, software or not, mlx5's RoCE ECN switches (sysfs); its DCB
// and whether it is a VLAN (the probe).
NetdevFacts read_netdev_facts(const FileSystem& fs, FabricProbe& probe, const std::string& name);

// Which of rnvme, nvme_rdma and nvme_fabrics are loaded, rnvme's transport name, the modprobe.d
// install lines for nvme-rdma (redirect or block), DKMS registration and the installed kernels.
ModuleFacts read_module_facts(const FileSystem& fs);

// A sysfs CPU list ("0-3,6,8-9") -> the number of CPUs in it (7).
int count_cpu_list(std::string_view s);

}  // namespace rnvme
