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
  int n = 0;
  std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&n));
  if (!list) return std::nullopt;
  for (int i = 0; i < n; i++) {
    if (device != ibv_get_device_name(list.get()[i])) continue;
    std::unique_ptr<ibv_context, ContextDeleter> ctx(ibv_open_device(list.get()[i]));
    if (!ctx) return std::nullopt;
    ibv_port_attr attr{};
    if (ibv_query_port(ctx.get(), static_cast<uint8_t>(port), &attr) != 0) return std::nullopt;
    int bytes = mtu_bytes(attr.active_mtu);
    return bytes ? std::optional<int>(bytes) : std::nullopt;
  }
  return std::nullopt;
}

#else

std::optional<int> VerbsPortQuery::active_mtu(const std::string&, int) { return std::nullopt; }

#endif

}  // namespace rnvme
