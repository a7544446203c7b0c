#include "sys/nl_handles.h"

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

}  // namespace rnvme::nl
