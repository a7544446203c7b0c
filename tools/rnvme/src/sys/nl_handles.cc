#include "sys/nl_handles.h"
#include "core/ip.h"

#include <fmt/format.h>
#include <net/if.h>

#include <cerrno>

namespace rnvme::nl {

Sock open_socket(int protocol, int& rc) {
  rc = 0;
  Sock sock(nl_socket_alloc());
  if (!sock) {
    rc = -NLE_NOMEM;
    return sock;
  }
  if (rc = nl_connect(sock.get(), protocol); rc < 0) sock.reset();
  return sock;
}

Exchange transact(nl_sock* sock, nl_msg* msg, const std::function<void(nl_msg*)>& on_msg) {
  Exchange x;
  Cb cb(nl_cb_alloc(NL_CB_DEFAULT));
  if (!cb) return {-NLE_NOMEM, ENOMEM, false};
  struct Ctx {
    const std::function<void(nl_msg*)>* on_msg;
    Exchange* x;
  } ctx{&on_msg, &x};
  nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM,
            [](nl_msg* m, void* arg) -> int {
              (*static_cast<Ctx*>(arg)->on_msg)(m);
              return NL_OK;
            },
            &ctx);
  nl_cb_err(cb.get(), NL_CB_CUSTOM,
            [](sockaddr_nl*, nlmsgerr* e, void* arg) -> int {
              static_cast<Ctx*>(arg)->x->err = -e->error;
              return NL_STOP;  // nl_recvmsgs returns libnl's code for it, as without this handler
            },
            &ctx);
  if (int rc = nl_send_auto(sock, msg); rc < 0) {
    x.rc = rc;
    return x;
  }
  x.sent = true;
  if (int rc = nl_recvmsgs(sock, cb.get()); rc < 0) x.rc = rc;
  return x;
}

Reply query(nl_msg* msg, const std::function<void(nlmsghdr*)>& on_msg, int protocol) {
  int rc = 0;
  Sock sock = open_socket(protocol, rc);
  if (rc == -NLE_NOMEM) return {ENOMEM, "out of memory allocating a netlink socket"};
  if (!sock) return {0, fmt::format("connect to netlink: {}", nl_geterror(rc))};
  Exchange x = transact(sock.get(), msg, [&](nl_msg* m) { on_msg(nlmsg_hdr(m)); });
  Reply r;
  r.err = x.err;
  if (x.rc < 0 && !x.err)
    r.failure = fmt::format("{}route netlink: {}", x.sent ? "" : "send to ", nl_geterror(x.rc));
  return r;
}

Addr address(const std::string& ip) {
  auto a = parse_ip(ip);
  if (!a) return {};
  return Addr(nl_addr_build(a->family, a->bytes.data(), a->size()));
}

std::string address_text(nl_addr* a) {
  if (!a) return {};
  const int family = nl_addr_get_family(a);
  const unsigned want = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
  if (!want || nl_addr_get_len(a) < want) return {};
  return ip_text(family, nl_addr_get_binary_addr(a));
}

std::string ifname(int ifindex) {
  char buf[IF_NAMESIZE] = {};
  return if_indextoname(static_cast<unsigned>(ifindex), buf) ? std::string(buf)
                                                             : fmt::format("ifindex {}", ifindex);
}

}  // namespace rnvme::nl
