#include "sys/route.h"
#include "core/ip.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "sys/fd.h"

namespace rnvme {
namespace {

bool to_sockaddr(const std::string& ip, sockaddr_storage& ss, socklen_t& len) {
  std::memset(&ss, 0, sizeof ss);
  auto a = parse_ip(ip);
  if (!a) return false;
  if (a->family == AF_INET) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
    v4->sin_family = AF_INET;
    std::memcpy(&v4->sin_addr, a->bytes.data(), 4);
    len = sizeof *v4;
  } else {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
    v6->sin6_family = AF_INET6;
    std::memcpy(&v6->sin6_addr, a->bytes.data(), 16);
    len = sizeof *v6;
  }
  return true;
}

}  // namespace

Result<std::string> RealNetProbe::source_for(const std::string& dst) {
  sockaddr_storage ss;
  socklen_t len = 0;
  if (!to_sockaddr(dst, ss, len)) return make_error(ErrorCode::kUsage, "not an IP address: " + dst);
  reinterpret_cast<sockaddr_in*>(&ss)->sin_port = htons(4420);  // same offset for v4 and v6
  // connect() on a UDP socket sends nothing: it only runs the route lookup.
  Fd fd(::socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid() || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) < 0) {
    Error e = make_error(ErrorCode::kFailure, fmt::format("no route to {}: {}", dst, std::strerror(errno)));
    e.sys_errno = errno;
    return e;
  }
  sockaddr_storage local;
  socklen_t llen = sizeof local;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &llen) < 0) {
    Error e = make_error(ErrorCode::kFailure, fmt::format("getsockname: {}", std::strerror(errno)));
    e.sys_errno = errno;
    return e;
  }
  const void* addr = local.ss_family == AF_INET
                         ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr)
                         : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr);
  return ip_text(local.ss_family, addr);
}

bool RealNetProbe::is_local(const std::string& ip) {
  sockaddr_storage ss;
  socklen_t len = 0;
  if (!to_sockaddr(ip, ss, len)) return false;
  Fd fd(::socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  // bind() to a port-0 address succeeds only for addresses configured on this host.
  return fd.valid() && ::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) == 0;
}

}  // namespace rnvme
