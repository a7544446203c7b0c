#include "core/ip.h"

#include <arpa/inet.h>

#include <string>

namespace rnvme {

size_t IpAddress::size() const { return family == AF_INET ? 4 : 16; }

std::optional<IpAddress> parse_ip(std::string_view text) {
  // inet_pton reads a C string: text with a NUL in it would be cut there
  if (text.find('\0') != std::string_view::npos) return std::nullopt;
  const std::string s(text);
  IpAddress a;
  for (int af : {AF_INET, AF_INET6}) {
    if (inet_pton(af, s.c_str(), a.bytes.data()) == 1) {
      a.family = af;
      return a;
    }
  }
  return std::nullopt;
}

std::string ip_text(int family, const void* bytes) {
  char buf[INET6_ADDRSTRLEN] = {};
  if ((family != AF_INET && family != AF_INET6) || !bytes) return {};
  return inet_ntop(family, bytes, buf, sizeof buf) ? std::string(buf) : std::string();
}

}  // namespace rnvme
