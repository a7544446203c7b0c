// IP address text: the one parser the tool reads addresses with (options, discovery.conf,
// doctor, routes, netlink, GIDs).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace rnvme {

struct IpAddress {
  int family = 0;                   // AF_INET or AF_INET6
  std::array<uint8_t, 16> bytes{};  // network order; an IPv4 address in the first four
  size_t size() const;              // 4 or 16
  bool operator==(const IpAddress&) const = default;
};

// An IPv4 dotted quad or an IPv6 address (inet_pton's grammar: no port, no scope, no
// surrounding blanks); nullopt for anything else.
std::optional<IpAddress> parse_ip(std::string_view text);

inline bool is_ip_address(std::string_view text) { return parse_ip(text).has_value(); }

}  // namespace rnvme
