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

class LibnvmeDiscoveryLogCommand final : public DiscoveryLogCommand {
 public:
  LibnvmeDiscoveryLogCommand(int fd, const std::string& dev) : fd_(fd), dev_(dev) {}
  // libnvme splits a long read in 4 KiB commands and keeps the event (RAE=1) on all but the last,
  // which carries `rae`.
  Status get_log(uint32_t offset, std::span<uint8_t> buf, bool rae) override {
    int rc = nvme_get_log_discovery(fd_, rae, offset, static_cast<uint32_t>(buf.size()), buf.data());
    if (rc == 0) return Ok{};
    Error e = make_error(ErrorCode::kFailure,
                         rc < 0 ? fmt::format("get discovery log from {}: {}", dev_, std::strerror(errno))
                                : fmt::format("get discovery log from {}: NVMe status {}", dev_,
                                              nvme_status_text(static_cast<uint32_t>(rc))));
    if (rc < 0) e.sys_errno = errno;
    return e;
  }

 private:
  int fd_;
  const std::string& dev_;
};

}  // namespace

Result<std::vector<uint8_t>> read_discovery_log(DiscoveryLogCommand& cmd, const std::string& device) {
  for (int attempt = 0; attempt < kMaxAttempts; attempt++) {
    std::vector<uint8_t> hdr(kDiscoveryHeaderSize);
    if (auto st = cmd.get_log(0, hdr, /*rae=*/true); !st) return st.error();
    auto h = decode_discovery_header(hdr);
    if (!h) return h.error();
    if (h->numrec == 0) {
      // Nothing more to read; the confirming read is this header's again, with RAE=0.
      if (auto st = cmd.get_log(0, hdr, /*rae=*/false); !st) return st.error();
      auto after = decode_discovery_header(hdr);
      if (after && after->genctr == h->genctr && after->numrec == 0) return hdr;
      continue;
    }
    if (h->numrec > 1024)
      return make_error(ErrorCode::kFailure,
                        fmt::format("discovery log of {} claims {} records", device, h->numrec));
    std::vector<uint8_t> all(kDiscoveryHeaderSize + h->numrec * kDiscoveryEntrySize);
    if (auto st = cmd.get_log(0, all, /*rae=*/true); !st) return st.error();
    auto again = decode_discovery_header(all);
    if (!again || again->genctr != h->genctr || again->numrec != h->numrec) continue;
    // The last read of a log read whole: it clears the discovery-change event.
    if (auto st = cmd.get_log(0, hdr, /*rae=*/false); !st) return st.error();
    auto after = decode_discovery_header(hdr);
    if (after && after->genctr == h->genctr) return all;
  }
  return make_error(ErrorCode::kFailure,
                    fmt::format("discovery log of {} kept changing while it was read", device),
                    "the target's configuration is changing", "run the command again");
}

Result<std::vector<uint8_t>> LibnvmeDiscoveryLogSource::read(const std::string& device) {
  const std::string path = "/dev/" + device;
  Fd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd.valid()) {
    Error e = make_error(ErrorCode::kFailure, fmt::format("cannot open {}: {}", path, std::strerror(errno)));
    e.sys_errno = errno;
    return e;
  }
  LibnvmeDiscoveryLogCommand cmd(fd.get(), device);
  return read_discovery_log(cmd, device);
}

std::string libnvme_runtime_version() {
  const char* v = nvme_get_version(NVME_VERSION_PROJECT);
  return v ? std::string(v) : std::string();
}

}  // namespace rnvme
