#include "sys/nvme_admin.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>

extern "C" {
#include <libnvme.h>
}

#include "core/discovery.h"
#include "core/nvme_status.h"
#include "sys/fd.h"

namespace rnvme {
namespace {

// The log may change between reads (genctr moves); nvme-cli retries the same way.  libnvme reads
// a long log in 4 KiB commands, and only the first carries the header: a log that changed between
// them shows only in a header read after the whole log.
constexpr int kMaxAttempts = 3;

Status get_log(int fd, uint32_t offset, std::vector<uint8_t>& buf, const std::string& dev) {
  int rc = nvme_get_log_discovery(fd, /*rae=*/true, offset, static_cast<uint32_t>(buf.size()),
                                  buf.data());
  if (rc == 0) return Ok{};
  Error e = make_error(ErrorCode::kFailure,
                       rc < 0 ? fmt::format("get discovery log from {}: {}", dev, std::strerror(errno))
                              : fmt::format("get discovery log from {}: NVMe status {}", dev,
                                            nvme_status_text(static_cast<uint32_t>(rc))));
  if (rc < 0) e.sys_errno = errno;
  return e;
}

}  // namespace

Result<std::vector<uint8_t>> LibnvmeDiscoveryLogSource::read(const std::string& device) {
  const std::string path = "/dev/" + device;
  Fd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd.valid()) {
    Error e = make_error(ErrorCode::kFailure, fmt::format("cannot open {}: {}", path, std::strerror(errno)));
    e.sys_errno = errno;
    return e;
  }
  for (int attempt = 0; attempt < kMaxAttempts; attempt++) {
    std::vector<uint8_t> hdr(kDiscoveryHeaderSize);
    if (auto st = get_log(fd.get(), 0, hdr, device); !st) return st.error();
    auto h = decode_discovery_header(hdr);
    if (!h) return h.error();
    if (h->numrec == 0) return hdr;
    if (h->numrec > 1024)
      return make_error(ErrorCode::kFailure,
                        fmt::format("discovery log of {} claims {} records", device, h->numrec));
    std::vector<uint8_t> all(kDiscoveryHeaderSize + h->numrec * kDiscoveryEntrySize);
    if (auto st = get_log(fd.get(), 0, all, device); !st) return st.error();
    auto again = decode_discovery_header(all);
    if (!again || again->genctr != h->genctr || again->numrec != h->numrec) continue;
    if (auto st = get_log(fd.get(), 0, hdr, device); !st) return st.error();
    auto after = decode_discovery_header(hdr);
    if (after && after->genctr == h->genctr) return all;
  }
  return make_error(ErrorCode::kFailure,
                    fmt::format("discovery log of {} kept changing while it was read", device),
                    "the target's configuration is changing", "run the command again");
}

}  // namespace rnvme
