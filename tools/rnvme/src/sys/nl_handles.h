// Owners of libnl handles (socket, message, callback set, and libnl-route's cache, address and
// route/neighbour/link objects), the one request/reply exchange the netlink adapters share, and
// what route netlink replies are read with (libnl addresses as text, ifindex as a netdev name).
#pragma once

#include <netlink/addr.h>
#include <netlink/cache.h>
#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/neighbour.h>
#include <netlink/route/route.h>

#include <functional>
#include <memory>
#include <string>

namespace rnvme::nl {

struct SockDeleter {
  void operator()(nl_sock* s) const { nl_socket_free(s); }
};
struct MsgDeleter {
  void operator()(nl_msg* m) const { nlmsg_free(m); }
};
struct CbDeleter {
  void operator()(nl_cb* c) const { nl_cb_put(c); }
};
struct CacheDeleter {
  void operator()(nl_cache* c) const { nl_cache_free(c); }
};
struct AddrDeleter {
  void operator()(nl_addr* a) const { nl_addr_put(a); }
};
struct ObjectDeleter {
  void operator()(nl_object* o) const { nl_object_put(o); }
};
struct RouteDeleter {
  void operator()(rtnl_route* r) const { rtnl_route_put(r); }
};
struct NeighDeleter {
  void operator()(rtnl_neigh* n) const { rtnl_neigh_put(n); }
};
struct LinkDeleter {
  void operator()(rtnl_link* l) const { rtnl_link_put(l); }
};
using Sock = std::unique_ptr<nl_sock, SockDeleter>;
using Msg = std::unique_ptr<nl_msg, MsgDeleter>;
using Cb = std::unique_ptr<nl_cb, CbDeleter>;
using Cache = std::unique_ptr<nl_cache, CacheDeleter>;
using Addr = std::unique_ptr<nl_addr, AddrDeleter>;
using Object = std::unique_ptr<nl_object, ObjectDeleter>;
using Route = std::unique_ptr<rtnl_route, RouteDeleter>;
using Neigh = std::unique_ptr<rtnl_neigh, NeighDeleter>;
using Link = std::unique_ptr<rtnl_link, LinkDeleter>;

// A request is built whole or not sent: the message was allocated and every
// attribute went in (put: the nla_put* calls, true when all returned 0).
inline bool built(const Msg& msg, const std::function<bool(nl_msg*)>& put) {
  return msg && (!put || put(msg.get()));
}

// A socket connected to netlink `protocol` (NETLINK_ROUTE, NETLINK_RDMA); empty when there is
// none, with libnl's code in `rc` (-NLE_NOMEM: it could not be allocated).
Sock open_socket(int protocol, int& rc);

struct Exchange {
  int rc = 0;         // libnl's code: < 0 when sending or receiving failed (a kernel error included)
  int err = 0;        // the errno the kernel answered with (positive); ENOMEM if no callback set
  bool sent = false;  // the request went out (rc < 0 then is about the answer)
};

// Sends `msg` on `sock` and hands every reply to `on_msg` (one nl_recvmsgs: a dump to its end,
// else the first answer). The kernel's error answer is kept as its errno in `err`, which libnl's
// own code in `rc` would blur (ENETUNREACH and EHOSTUNREACH are both NLE_FAILURE). What the
// adapters make of it is the same: `err` set, the kernel refused (their Error's sys_errno,
// FabricProbe's Reply::err); `rc` < 0 without it, a local failure.
Exchange transact(nl_sock* sock, nl_msg* msg, const std::function<void(nl_msg*)>& on_msg);

struct Reply {
  int err = 0;             // errno the kernel answered with (positive), 0 if none
  std::string failure;     // a local failure (socket, send), empty if none
};

// transact on a fresh socket of `protocol`, every reply handed to `on_msg`.
Reply query(nl_msg* msg, const std::function<void(nlmsghdr*)>& on_msg, int protocol = NETLINK_ROUTE);

// `ip` as a libnl address (its family and bytes); empty if it is not an IP address.
Addr address(const std::string& ip);
// The text of a libnl IPv4 or IPv6 address; empty for none or another family.
std::string address_text(nl_addr* a);
// The name of netdev `ifindex` (if_indextoname), "ifindex N" when there is none.
std::string ifname(int ifindex);

}  // namespace rnvme::nl
