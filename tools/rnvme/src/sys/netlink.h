// RDMA netlink (NETLINK_RDMA, RDMA_NL_NLDEV) through libnl: the device/port inventory and
// Soft-RoCE link management (what iproute2's `rdma link add/del` does).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/rdma.h"
#include "core/result.h"

namespace rnvme {

class RdmaNetlink {
 public:
  virtual ~RdmaNetlink() = default;
  // Devices with index, name and ports (index, state, physical state, netdev); the GID table
  // and MTUs are not in nldev and come from sysfs.
  virtual Result<std::vector<RdmaDevice>> devices() = 0;
  virtual Status add_link(const std::string& name, const std::string& type,
                          const std::string& netdev) = 0;
  virtual Status del_link(const std::string& name) = 0;
  // The port's hardware/software counters (RDMA_NLDEV_CMD_STAT_GET: what `rdma statistic show`
  // prints), name -> value.
  virtual Result<std::map<std::string, uint64_t>> port_counters(int dev_index, int port) = 0;
  // CQ adaptive moderation (RDMA_NLDEV_ATTR_DEV_DIM; iproute2: `rdma dev set DEV
  // adaptive-moderation on|off`). It applies to CQs created after it is set. nullopt: the kernel
  // does not report it (before 5.10).
  virtual Result<std::optional<bool>> adaptive_moderation(const std::string& dev) = 0;
  virtual Status set_adaptive_moderation(const std::string& dev, bool on) = 0;
};

class LibnlRdmaNetlink final : public RdmaNetlink {
 public:
  Result<std::vector<RdmaDevice>> devices() override;
  Status add_link(const std::string& name, const std::string& type,
                  const std::string& netdev) override;
  Status del_link(const std::string& name) override;
  Result<std::map<std::string, uint64_t>> port_counters(int dev_index, int port) override;
  Result<std::optional<bool>> adaptive_moderation(const std::string& dev) override;
  Status set_adaptive_moderation(const std::string& dev, bool on) override;
};

class FakeRdmaNetlink final : public RdmaNetlink {
 public:
  Result<std::vector<RdmaDevice>> devices() override {
    if (unavailable) return make_error(ErrorCode::kEnvironment, "RDMA netlink unavailable");
    return devs;
  }
  Status add_link(const std::string& name, const std::string& type,
                  const std::string& netdev) override;
  Status del_link(const std::string& name) override;
  Result<std::map<std::string, uint64_t>> port_counters(int dev_index, int port) override {
    if (unavailable) return make_error(ErrorCode::kEnvironment, "RDMA netlink unavailable");
    auto it = counters.find({dev_index, port});
    if (it == counters.end()) return std::map<std::string, uint64_t>{};
    return it->second;
  }
  Result<std::optional<bool>> adaptive_moderation(const std::string& dev) override {
    if (unavailable) return make_error(ErrorCode::kEnvironment, "RDMA netlink unavailable");
    auto it = dim.find(dev);
    if (it == dim.end()) return std::optional<bool>{};
    return std::optional<bool>{it->second};
  }
  Status set_adaptive_moderation(const std::string& dev, bool on) override;
  std::map<std::string, bool> dim;          // device -> adaptive moderation (absent: not reported)
  std::map<std::string, int> dim_refusals;  // device -> errno its set answers with
  std::vector<RdmaDevice> devs;
  std::map<std::pair<int, int>, std::map<std::string, uint64_t>> counters;
  bool unavailable = false;
  std::vector<std::string> calls;  // "add rxe0 rxe eth0", "del rxe0"
};

// A failed RDMA netlink exchange as this adapter's Error: libnl's text for `nl_rc` (its code, < 0)
// after `what`, and the errno the kernel answered with in sys_errno (0: it did not answer, the
// failure was local), as FabricProbe's Reply keeps it.
Error rdma_netlink_error(std::string_view what, int nl_rc, int kernel_errno);

std::string ib_port_state_name(int state);
std::string ib_port_phys_state_name(int state);

}  // namespace rnvme
