// IP address text: the one parser the tool reads addresses with (options, discovery.conf,
// doctor, routes, netlink, GIDs).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
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

// The text of an address of `family` (AF_INET: 4 bytes at `bytes`, AF_INET6: 16), as inet_ntop
// writes it ("192.0.2.1", "2001:db8::1"); empty for another family. The one place addresses
// become text again (routes, sockets, GIDs).
std::string ip_text(int family, const void* bytes);
inline std::string ip_text(const IpAddress& a) { return ip_text(a.family, a.bytes.data()); }

}  // namespace rnvme
