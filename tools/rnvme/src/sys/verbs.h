// What only the verbs API knows: a port's active MTU (neither sysfs nor RDMA netlink reports it)
// and a device's limits. Uses libibverbs when the tool was built with it (RNVME_HAVE_IBVERBS);
// both look the device up by name in one place.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/host_facts.h"

namespace rnvme {

// ibv_query_device's max_qp, max_cq and max_mr of `device` into `l`; false (l untouched) when
// verbs cannot open it.
bool verbs_device_limits(const std::string& device, DeviceLimits& l);

class PortQuery {
 public:
  virtual ~PortQuery() = default;
  // Active MTU in bytes of `device` port `port`; nullopt if unknown (no verbs, no uverbs access).
  virtual std::optional<int> active_mtu(const std::string& device, int port) = 0;
};

class VerbsPortQuery final : public PortQuery {
 public:
  std::optional<int> active_mtu(const std::string& device, int port) override;
};

class FakePortQuery final : public PortQuery {
 public:
  std::optional<int> active_mtu(const std::string& device, int port) override {
    auto it = mtu.find(device + "/" + std::to_string(port));
    if (it == mtu.end()) return std::nullopt;
    return it->second;
  }
  std::map<std::string, int> mtu;  // "rxe0/1" -> bytes
};

}  // namespace rnvme
