// Helpers the check families of `rnvme doctor` share (core/doctor/*.cc): building a check and
// looking facts up in a DoctorSnapshot.  Internal to core/doctor/; callers use core/doctor.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/doctor.h"

namespace rnvme::doctor_detail {

inline DoctorCheck ok(std::string id, std::string subject, std::string seen) {
  return {std::move(id), std::move(subject), Severity::kOk, std::move(seen), {}, {}};
}
inline DoctorCheck bad(Severity sev, std::string id, std::string subject, std::string seen,
                       std::string why, std::string fix) {
  return {std::move(id), std::move(subject), sev, std::move(seen), std::move(why), std::move(fix)};
}

inline std::string join(const std::vector<std::string>& v, std::string_view sep = ", ") {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

inline std::string prio_list(uint8_t bits) {
  std::vector<std::string> p;
  for (int i = 0; i < 8; i++)
    if (bits & (1u << i)) p.push_back(std::to_string(i));
  return p.empty() ? "none" : join(p, ",");
}

inline bool is_soft(const DoctorSnapshot& s, const std::string& dev) {
  auto it = s.software_device.find(dev);
  return it != s.software_device.end() && it->second;
}

inline const NetdevFacts* netdev(const DoctorSnapshot& s, const std::string& name) {
  auto it = s.netdevs.find(name);
  return it == s.netdevs.end() ? nullptr : &it->second;
}

// The RDMA ports whose netdev is `nd` (or that hold a GID of `nd`: a VLAN on the RDMA netdev).
inline std::vector<std::pair<const RdmaDevice*, const RdmaPort*>> ports_on(const DoctorSnapshot& s,
                                                                          const std::string& nd) {
  std::vector<std::pair<const RdmaDevice*, const RdmaPort*>> out;
  for (const auto& d : s.devices)
    for (const auto& p : d.ports) {
      bool on = p.netdev == nd;
      for (const auto& g : p.gids) on = on || g.ndev == nd;
      if (on) out.emplace_back(&d, &p);
    }
  return out;
}

// The netdev MTU a RoCE MTU needs (payload + RoCE v2 headers, 60 bytes), rounded as admins set it.
inline int netdev_mtu_for_roce(int roce_mtu) {
  if (roce_mtu <= 1024) return 1500;
  return roce_mtu + 104;  // 2048 -> 2152, 4096 -> 4200 (NVIDIA's figure for a 4096 RoCE MTU)
}

}  // namespace rnvme::doctor_detail
