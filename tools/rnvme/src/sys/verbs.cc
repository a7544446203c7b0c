#include "sys/verbs.h"

#ifdef RNVME_HAVE_IBVERBS
#include <infiniband/verbs.h>

#include <memory>
#endif

namespace rnvme {

#ifdef RNVME_HAVE_IBVERBS
namespace {

struct DeviceListDeleter {
  void operator()(ibv_device** l) const { ibv_free_device_list(l); }
};
struct ContextDeleter {
  void operator()(ibv_context* c) const { ibv_close_device(c); }
};

// The one lookup of a verbs device by name: opens `name` and hands its context to `use`; false
// when there is no such device or it cannot be opened (`use` is not called then).
template <typename F>
bool with_device(const std::string& name, F use) {
  int n = 0;
  std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&n));
  if (!list) return false;
  for (int i = 0; i < n; i++) {
    if (name != ibv_get_device_name(list.get()[i])) continue;
    std::unique_ptr<ibv_context, ContextDeleter> ctx(ibv_open_device(list.get()[i]));
    if (!ctx) return false;
    use(ctx.get());
    return true;
  }
  return false;
}

int mtu_bytes(ibv_mtu m) {
  switch (m) {
    case IBV_MTU_256: return 256;
    case IBV_MTU_512: return 512;
    case IBV_MTU_1024: return 1024;
    case IBV_MTU_2048: return 2048;
    case IBV_MTU_4096: return 4096;
  }
  return 0;
}

}  // namespace

std::optional<int> VerbsPortQuery::active_mtu(const std::string& device, int port) {
  std::optional<int> out;
  with_device(device, [&](ibv_context* ctx) {
    ibv_port_attr attr{};
    if (ibv_query_port(ctx, static_cast<uint8_t>(port), &attr) != 0) return;
    if (int bytes = mtu_bytes(attr.active_mtu)) out = bytes;
  });
  return out;
}

bool verbs_device_limits(const std::string& device, DeviceLimits& l) {
  bool got = false;
  with_device(device, [&](ibv_context* ctx) {
    ibv_device_attr attr{};
    if (ibv_query_device(ctx, &attr) != 0) return;
    l.max_qp = attr.max_qp;
    l.max_cq = attr.max_cq;
    l.max_mr = attr.max_mr;
    got = true;
  });
  return got;
}

#else

std::optional<int> VerbsPortQuery::active_mtu(const std::string&, int) { return std::nullopt; }

bool verbs_device_limits(const std::string&, DeviceLimits&) { return false; }

#endif

}  // namespace rnvme
