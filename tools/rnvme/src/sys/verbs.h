// What only the verbs API knows about a port: the active MTU (neither sysfs nor RDMA netlink
// reports it). Uses libibverbs when the tool was built with it (RNVME_HAVE_IBVERBS).
#pragma once

#include <map>
#include <optional>
#include <string>

namespace rnvme {

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
