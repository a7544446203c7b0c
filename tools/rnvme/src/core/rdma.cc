#include "core/rdma.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <cstring>

namespace rnvme {

std::string strip_state_prefix(std::string_view s) {
  auto colon = s.find(':');
  if (colon != std::string_view::npos) s = s.substr(colon + 1);
  while (!s.empty() && (s.front() == ' ')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  return std::string(s);
}

std::optional<std::string> gid_for_address(std::string_view ip) {
  std::string str(ip);
  unsigned char b[16] = {};
  in_addr v4{};
  if (inet_pton(AF_INET, str.c_str(), &v4) == 1) {
    b[10] = 0xff;
    b[11] = 0xff;
    std::memcpy(b + 12, &v4, 4);
  } else if (inet_pton(AF_INET6, str.c_str(), b) != 1) {
    return std::nullopt;
  }
  std::string g;
  for (int i = 0; i < 16; i += 2) {
    if (i) g += ':';
    g += fmt::format("{:02x}{:02x}", b[i], b[i + 1]);
  }
  return g;
}

bool is_zero_gid(std::string_view gid) {
  return gid.find_first_not_of("0:\n") == std::string_view::npos;
}

std::optional<GidMatch> find_gid(const std::vector<RdmaDevice>& devs, std::string_view ip) {
  auto want = gid_for_address(ip);
  if (!want) return std::nullopt;
  std::optional<GidMatch> any;
  for (const auto& d : devs)
    for (const auto& p : d.ports)
      for (const auto& g : p.gids) {
        if (g.gid != *want) continue;
        if (g.type == "RoCE v2") return GidMatch{&d, &p, &g};
        if (!any) any = GidMatch{&d, &p, &g};
      }
  return any;
}

int roce_mtu_for_netdev_mtu(int netdev_mtu) {
  // RoCE v2 headers: IP 20 + UDP 8 + BTH 12 + RETH 16 + ICRC 4 = 60 bytes on top of the payload.
  for (int mtu : {4096, 2048, 1024, 512, 256})
    if (netdev_mtu >= mtu + 60) return mtu;
  return 0;
}

}  // namespace rnvme
