// Owners of libnl handles (socket, message, callback set), shared by the netlink adapters.
#pragma once

#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include <memory>

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
using Sock = std::unique_ptr<nl_sock, SockDeleter>;
using Msg = std::unique_ptr<nl_msg, MsgDeleter>;
using Cb = std::unique_ptr<nl_cb, CbDeleter>;

}  // namespace rnvme::nl
