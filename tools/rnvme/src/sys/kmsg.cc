#include "sys/kmsg.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>

#include "core/kmsg.h"

namespace rnvme {

void RealKernelLog::mark() {
  // Unreadable /dev/kmsg (no root, dmesg_restrict) only costs the kernel lines in explanations.
  fd_ = Fd(::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd_.valid()) ::lseek(fd_.get(), 0, SEEK_END);
}

std::vector<std::string> RealKernelLog::since_mark() {
  std::vector<std::string> out;
  if (!fd_.valid()) return out;
  char buf[8192];  // one record per read; records are at most ~1 KiB of text
  for (;;) {
    ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EPIPE) continue;  // records overwritten while reading: skip ahead
      if (errno == EINTR) continue;
      break;                         // EAGAIN: nothing more
    }
    auto rec = parse_kmsg_record(std::string_view(buf, static_cast<size_t>(n)));
    if (rec && is_connect_related(rec->text)) out.push_back(rec->text);
  }
  return out;
}

}  // namespace rnvme
