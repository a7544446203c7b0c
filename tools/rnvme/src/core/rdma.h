// RDMA devices, ports and GID tables as the tool reports them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnvme {

struct RdmaGid {
  int index = 0;
  std::string gid;     // sysfs notation: 8 groups of 4 hex digits
  std::string type;    // as sysfs gid_attrs/types has it: "RoCE v2", "IB/RoCE v1"; empty if unknown
  std::string ndev;    // netdev the GID belongs to (RoCE)
};

struct RdmaPort {
  int index = 0;
  std::string state;        // "ACTIVE", "DOWN", ...
  std::string phys_state;   // "LINK_UP", ...
  std::string link_layer;   // "Ethernet" or "InfiniBand"
  int active_mtu = 0;       // bytes, from verbs; 0 if unknown
  std::string netdev;       // associated netdev
  int netdev_mtu = 0;       // bytes of the netdev, 0 if unknown
  std::vector<RdmaGid> gids;  // only populated entries (non-zero GIDs)
};

struct RdmaDevice {
  int index = -1;           // nldev device index
  std::string name;
  std::string node_type;
  std::vector<RdmaPort> ports;
};

// "1: ACTIVE" / "4: ACTIVE" from sysfs -> "ACTIVE".
std::string strip_state_prefix(std::string_view s);
// The GID an address gets on a RoCE port: IPv4-mapped for IPv4, the address itself for IPv6.
std::optional<std::string> gid_for_address(std::string_view ip);
bool is_zero_gid(std::string_view gid);
// The address a GID stands for, as admins write it: "192.168.50.1" for an IPv4-mapped GID,
// "fe80::5054:ff:fe12:3456" otherwise (an IB GID prints as IPv6 too); nullopt if `gid` is not
// 8 groups of 4 hex digits.
std::optional<std::string> gid_address(std::string_view gid);

// The GID type as show_gids and admins name it: sysfs says "IB/RoCE v1" for both an InfiniBand
// GID and a RoCE v1 one, so the port's link layer decides ("IB" on InfiniBand, "RoCE v1" on
// Ethernet); "RoCE v2" stays.  Unknown link layer: the sysfs text.
std::string gid_type_name(std::string_view sysfs_type, std::string_view link_layer);

struct GidMatch {
  const RdmaDevice* device = nullptr;
  const RdmaPort* port = nullptr;
  const RdmaGid* gid = nullptr;
};
// The GID for `ip`, preferring a RoCE v2 entry over a v1 one with the same address.
std::optional<GidMatch> find_gid(const std::vector<RdmaDevice>& devs, std::string_view ip);

// The RoCE MTU a netdev MTU allows: the largest IB MTU that fits after RoCE v2 headers.
int roce_mtu_for_netdev_mtu(int netdev_mtu);

}  // namespace rnvme
