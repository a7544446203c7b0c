#include "core/rdma.h"
#include "core/ip.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <array>
#include <cctype>
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
  auto a = parse_ip(ip);
  if (!a) return std::nullopt;
  std::array<uint8_t, 16> b{};
  if (a->family == AF_INET) {
    // an IPv4 address's RoCE v2 GID is its IPv4-mapped IPv6 address
    b[10] = 0xff;
    b[11] = 0xff;
    std::memcpy(b.data() + 12, a->bytes.data(), 4);
  } else {
    b = a->bytes;
  }
  std::string g;
  for (int i = 0; i < 16; i += 2) {
    if (i) g += ':';
    g += fmt::format("{:02x}{:02x}", b[i], b[i + 1]);
  }
  return g;
}

std::optional<std::string> gid_address(std::string_view gid) {
  while (!gid.empty() && (gid.back() == '\n' || gid.back() == ' ')) gid.remove_suffix(1);
  if (gid.size() != 39) return std::nullopt;
  unsigned char b[16];
  for (int i = 0; i < 8; i++) {
    std::string_view group = gid.substr(static_cast<size_t>(i) * 5, 4);
    if (i < 7 && gid[static_cast<size_t>(i) * 5 + 4] != ':') return std::nullopt;
    unsigned v = 0;
    for (char c : group) {
      int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
              : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
              : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                          : -1;
      if (d < 0) return std::nullopt;
      v = v * 16 + static_cast<unsigned>(d);
    }
    b[2 * i] = static_cast<unsigned char>(v >> 8);
    b[2 * i + 1] = static_cast<unsigned char>(v & 0xff);
  }
  static const unsigned char kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  const bool v4 = std::memcmp(b, kV4Mapped, sizeof(kV4Mapped)) == 0;
  std::string text = v4 ? ip_text(AF_INET, b + 12) : ip_text(AF_INET6, b);
  return text.empty() ? std::nullopt : std::optional<std::string>(std::move(text));
}

std::string gid_type_name(std::string_view sysfs_type, std::string_view link_layer) {
  if (link_layer == "InfiniBand" && (sysfs_type.empty() || sysfs_type == "IB/RoCE v1")) return "IB";
  if (link_layer == "Ethernet" && sysfs_type == "IB/RoCE v1") return "RoCE v1";
  return std::string(sysfs_type);
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
