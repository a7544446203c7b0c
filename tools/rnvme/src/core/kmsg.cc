#include "core/kmsg.h"

#include <array>
#include <charconv>

namespace rnvme {

std::optional<KmsgRecord> parse_kmsg_record(std::string_view raw) {
  auto semi = raw.find(';');
  if (semi == std::string_view::npos) return std::nullopt;
  auto head = raw.substr(0, semi);
  auto text = raw.substr(semi + 1);
  // Continuation lines (" KEY=value") follow the first newline.
  if (auto nl = text.find('\n'); nl != std::string_view::npos) text = text.substr(0, nl);

  std::array<uint64_t, 3> f{};
  for (size_t i = 0; i < f.size(); i++) {
    auto comma = head.find(',');
    auto tok = head.substr(0, comma);
    auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), f[i]);
    if (ec != std::errc() || p != tok.data() + tok.size()) return std::nullopt;
    if (comma == std::string_view::npos) {
      if (i < 2) return std::nullopt;
      break;
    }
    head = head.substr(comma + 1);
  }
  KmsgRecord r;
  r.level = static_cast<int>(f[0] & 7);  // the facility sits above bit 3
  r.seq = f[1];
  r.usec = f[2];
  r.text = std::string(text);
  return r;
}

bool is_connect_related(std::string_view t) {
  // nvme, nvme_fabrics, nvme_rdma, rnvme, nvmet*, rdma_cm, rdma_rxe, ib_core, and ib_device
  // messages ("infiniband rxe0: ...").
  return t.find("nvme") != std::string_view::npos || t.find("rdma") != std::string_view::npos ||
         t.substr(0, 3) == "ib_" || t.find("rxe") != std::string_view::npos ||
         t.substr(0, 10) == "infiniband";
}

}  // namespace rnvme
