#include "sys/netlink.h"
#include "sys/nl_handles.h"

#include <fmt/format.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <rdma/rdma_netlink.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <functional>
#include <memory>

namespace rnvme {
namespace {

using nl::Sock;
using nl::Msg;

Result<Sock> open_socket() {
  int rc = 0;
  Sock s = nl::open_socket(NETLINK_RDMA, rc);
  if (rc == -NLE_NOMEM) return make_error(ErrorCode::kFailure, "out of memory allocating a netlink socket");
  if (!s) return rdma_netlink_error("connect to RDMA netlink", rc, 0);
  return s;
}

Msg new_msg(int cmd, int flags) {
  return Msg(nlmsg_alloc_simple(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd), flags));
}

// The request for @what, with the attributes put() adds; an error when it
// cannot be built whole (nothing is sent then).
Result<Msg> request(int cmd, int flags, std::string_view what,
                    const std::function<bool(nl_msg*)>& put = nullptr) {
  Msg msg = new_msg(cmd, flags);
  if (!nl::built(msg, put))
    return make_error(ErrorCode::kFailure,
                      fmt::format("{}: cannot build the netlink request (out of memory, or an "
                                  "attribute longer than a message)", what));
  return msg;
}

using Attrs = std::array<nlattr*, RDMA_NLDEV_ATTR_MAX>;

bool parse(nl_msg* msg, Attrs& tb) {
  tb.fill(nullptr);
  // nldev messages carry attributes right after the netlink header (no family header).
  return nlmsg_parse(nlmsg_hdr(msg), 0, tb.data(), RDMA_NLDEV_ATTR_MAX - 1, nullptr) == 0;
}

// nl::transact, with libnl's failure (the kernel's error answer included) as this adapter's Error.
Status transact(nl_sock* s, nl_msg* msg, const std::function<void(nl_msg*)>& on_msg,
                std::string_view what) {
  if (nl::Exchange x = nl::transact(s, msg, on_msg); x.rc < 0) return rdma_netlink_error(what, x.rc, x.err);
  return Ok{};
}

}  // namespace

Error rdma_netlink_error(std::string_view what, int nl_rc, int kernel_errno) {
  Error e = make_error(ErrorCode::kEnvironment, fmt::format("{}: {}", what, nl_geterror(nl_rc)),
                       "RDMA netlink is unavailable or refused the request",
                       "load ib_core (and rdma_rxe for Soft-RoCE); changing links needs root");
  e.sys_errno = kernel_errno;
  return e;
}

std::string ib_port_state_name(int s) {
  switch (s) {
    case 1: return "DOWN";
    case 2: return "INIT";
    case 3: return "ARMED";
    case 4: return "ACTIVE";
    case 5: return "ACTIVE_DEFER";
    default: return fmt::format("state {}", s);
  }
}

std::string ib_port_phys_state_name(int s) {
  switch (s) {
    case 1: return "SLEEP";
    case 2: return "POLLING";
    case 3: return "DISABLED";
    case 4: return "PORT_CONFIGURATION_TRAINING";
    case 5: return "LINK_UP";
    case 6: return "LINK_ERROR_RECOVERY";
    case 7: return "PHY_TEST";
    default: return fmt::format("phys_state {}", s);
  }
}

Result<std::vector<RdmaDevice>> LibnlRdmaNetlink::devices() {
  auto sock = open_socket();
  if (!sock) return sock.error();
  std::vector<RdmaDevice> devs;
  {
    auto msg = request(RDMA_NLDEV_CMD_GET, NLM_F_REQUEST | NLM_F_DUMP, "list RDMA devices");
    if (!msg) return msg.error();
    auto st = transact(sock->get(), msg->get(), [&](nl_msg* m) {
      Attrs tb;
      if (!parse(m, tb) || !tb[RDMA_NLDEV_ATTR_DEV_INDEX] || !tb[RDMA_NLDEV_ATTR_DEV_NAME]) return;
      RdmaDevice d;
      d.index = static_cast<int>(nla_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]));
      d.name = nla_get_string(tb[RDMA_NLDEV_ATTR_DEV_NAME]);
      devs.push_back(std::move(d));
    }, "list RDMA devices");
    if (!st) return st.error();
  }
  for (auto& d : devs) {
    // Port dumps are per device: the kernel requires the device index.
    auto msg = request(RDMA_NLDEV_CMD_PORT_GET, NLM_F_REQUEST | NLM_F_DUMP, "list RDMA ports",
                       [&](nl_msg* m) {
                         return nla_put_u32(m, RDMA_NLDEV_ATTR_DEV_INDEX,
                                            static_cast<uint32_t>(d.index)) == 0;
                       });
    if (!msg) return msg.error();
    auto st = transact(sock->get(), msg->get(), [&](nl_msg* m) {
      Attrs tb;
      if (!parse(m, tb) || !tb[RDMA_NLDEV_ATTR_PORT_INDEX]) return;
      RdmaPort p;
      p.index = static_cast<int>(nla_get_u32(tb[RDMA_NLDEV_ATTR_PORT_INDEX]));
      if (tb[RDMA_NLDEV_ATTR_PORT_STATE])
        p.state = ib_port_state_name(nla_get_u8(tb[RDMA_NLDEV_ATTR_PORT_STATE]));
      if (tb[RDMA_NLDEV_ATTR_PORT_PHYS_STATE])
        p.phys_state = ib_port_phys_state_name(nla_get_u8(tb[RDMA_NLDEV_ATTR_PORT_PHYS_STATE]));
      if (tb[RDMA_NLDEV_ATTR_NDEV_NAME]) p.netdev = nla_get_string(tb[RDMA_NLDEV_ATTR_NDEV_NAME]);
      d.ports.push_back(std::move(p));
    }, "list RDMA ports");
    if (!st) return st.error();
    std::sort(d.ports.begin(), d.ports.end(),
              [](const RdmaPort& a, const RdmaPort& b) { return a.index < b.index; });
  }
  std::sort(devs.begin(), devs.end(),
            [](const RdmaDevice& a, const RdmaDevice& b) { return a.name < b.name; });
  return devs;
}

Status LibnlRdmaNetlink::add_link(const std::string& name, const std::string& type,
                                  const std::string& netdev) {
  const std::string what = fmt::format("rdma link add {} type {} netdev {}", name, type, netdev);
  auto msg = request(RDMA_NLDEV_CMD_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, what, [&](nl_msg* m) {
    return nla_put_string(m, RDMA_NLDEV_ATTR_DEV_NAME, name.c_str()) == 0 &&
           nla_put_string(m, RDMA_NLDEV_ATTR_LINK_TYPE, type.c_str()) == 0 &&
           nla_put_string(m, RDMA_NLDEV_ATTR_NDEV_NAME, netdev.c_str()) == 0;
  });
  if (!msg) return msg.error();
  auto sock = open_socket();
  if (!sock) return sock.error();
  return transact(sock->get(), msg->get(), [](nl_msg*) {}, what);
}

Status LibnlRdmaNetlink::del_link(const std::string& name) {
  auto devs = devices();
  if (!devs) return devs.error();
  auto it = std::find_if(devs->begin(), devs->end(),
                         [&](const RdmaDevice& d) { return d.name == name; });
  if (it == devs->end())
    return make_error(ErrorCode::kNotFound, fmt::format("no RDMA device named {}", name), {},
                      "'rnvme rdma' lists the devices");
  const std::string what = fmt::format("rdma link delete {}", name);
  auto msg = request(RDMA_NLDEV_CMD_DELLINK, NLM_F_REQUEST | NLM_F_ACK, what, [&](nl_msg* m) {
    return nla_put_u32(m, RDMA_NLDEV_ATTR_DEV_INDEX, static_cast<uint32_t>(it->index)) == 0;
  });
  if (!msg) return msg.error();
  auto sock = open_socket();
  if (!sock) return sock.error();
  return transact(sock->get(), msg->get(), [](nl_msg*) {}, what);
}

Result<std::map<std::string, uint64_t>> LibnlRdmaNetlink::port_counters(int dev_index, int port) {
  const std::string what = fmt::format("read the counters of RDMA device {} port {}", dev_index, port);
  auto msg = request(RDMA_NLDEV_CMD_STAT_GET, NLM_F_REQUEST | NLM_F_ACK, what, [&](nl_msg* m) {
    return nla_put_u32(m, RDMA_NLDEV_ATTR_DEV_INDEX, static_cast<uint32_t>(dev_index)) == 0 &&
           nla_put_u32(m, RDMA_NLDEV_ATTR_PORT_INDEX, static_cast<uint32_t>(port)) == 0;
  });
  if (!msg) return msg.error();
  auto sock = open_socket();
  if (!sock) return sock.error();
  std::map<std::string, uint64_t> out;
  auto st = transact(sock->get(), msg->get(), [&](nl_msg* m) {
    Attrs tb;
    if (!parse(m, tb) || !tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS]) return;
    nlattr* entry;
    int rem;
    nla_for_each_nested(entry, tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS], rem) {
      Attrs e;
      e.fill(nullptr);
      if (nla_parse_nested(e.data(), RDMA_NLDEV_ATTR_MAX - 1, entry, nullptr) < 0) continue;
      if (!e[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME] || !e[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE])
        continue;
      out[nla_get_string(e[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME])] =
          nla_get_u64(e[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE]);
    }
  }, what);
  if (!st) return st.error();
  return out;
}

namespace {
Result<int> device_index(RdmaNetlink& nl, const std::string& name) {
  auto devs = nl.devices();
  if (!devs) return devs.error();
  for (const auto& d : *devs)
    if (d.name == name) return d.index;
  return make_error(ErrorCode::kNotFound, fmt::format("no RDMA device named {}", name), {},
                    "'rnvme rdma' lists the devices");
}
}  // namespace

Result<std::optional<bool>> LibnlRdmaNetlink::adaptive_moderation(const std::string& dev) {
  auto idx = device_index(*this, dev);
  if (!idx) return idx.error();
  auto msg = request(RDMA_NLDEV_CMD_GET, NLM_F_REQUEST, fmt::format("read RDMA device {}", dev),
                     [&](nl_msg* m) {
                       return nla_put_u32(m, RDMA_NLDEV_ATTR_DEV_INDEX,
                                          static_cast<uint32_t>(*idx)) == 0;
                     });
  if (!msg) return msg.error();
  auto sock = open_socket();
  if (!sock) return sock.error();
  std::optional<bool> on;
  auto st = transact(sock->get(), msg->get(), [&](nl_msg* m) {
    Attrs tb;
    if (parse(m, tb) && tb[RDMA_NLDEV_ATTR_DEV_DIM]) on = nla_get_u8(tb[RDMA_NLDEV_ATTR_DEV_DIM]) != 0;
  }, fmt::format("read RDMA device {}", dev));
  if (!st) return st.error();
  return on;
}

Status LibnlRdmaNetlink::set_adaptive_moderation(const std::string& dev, bool on) {
  auto idx = device_index(*this, dev);
  if (!idx) return idx.error();
  auto msg = request(RDMA_NLDEV_CMD_SET, NLM_F_REQUEST | NLM_F_ACK,
                     fmt::format("rdma dev set {} adaptive-moderation", dev), [&](nl_msg* m) {
                       return nla_put_u32(m, RDMA_NLDEV_ATTR_DEV_INDEX,
                                          static_cast<uint32_t>(*idx)) == 0 &&
                              nla_put_u8(m, RDMA_NLDEV_ATTR_DEV_DIM, on ? 1 : 0) == 0;
                     });
  if (!msg) return msg.error();
  auto sock = open_socket();
  if (!sock) return sock.error();
  return transact(sock->get(), msg->get(), [](nl_msg*) {},
                  fmt::format("rdma dev set {} adaptive-moderation {}", dev, on ? "on" : "off"));
}

Status FakeRdmaNetlink::set_adaptive_moderation(const std::string& dev, bool on) {
  calls.push_back(fmt::format("dim {} {}", dev, on ? "on" : "off"));
  if (auto it = dim_refusals.find(dev); it != dim_refusals.end()) {
    Error e = make_error(ErrorCode::kEnvironment,
                         fmt::format("rdma dev set {} adaptive-moderation: refused", dev));
    e.sys_errno = it->second;
    return e;
  }
  dim[dev] = on;
  return Ok{};
}

Status FakeRdmaNetlink::add_link(const std::string& name, const std::string& type,
                                 const std::string& netdev) {
  calls.push_back(fmt::format("add {} {} {}", name, type, netdev));
  RdmaDevice d;
  d.index = static_cast<int>(devs.size());
  d.name = name;
  RdmaPort p;
  p.index = 1;
  p.state = "ACTIVE";
  p.netdev = netdev;
  d.ports.push_back(p);
  devs.push_back(d);
  return Ok{};
}

Status FakeRdmaNetlink::del_link(const std::string& name) {
  calls.push_back("del " + name);
  auto it = std::find_if(devs.begin(), devs.end(), [&](const RdmaDevice& d) { return d.name == name; });
  if (it == devs.end()) return make_error(ErrorCode::kNotFound, "no RDMA device named " + name);
  devs.erase(it);
  return Ok{};
}

}  // namespace rnvme
