#include "sys/fabrics.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "sys/fd.h"

namespace rnvme {

static Error sys_error(std::string what, int err) {
  Error e = make_error(ErrorCode::kConnect, fmt::format("{}: {}", what, std::strerror(err)));
  e.sys_errno = err;
  return e;
}

// Why this is not libnvme's nvmf_add_ctrl() (issue 32 item 9): rnvme explains a failed connect
// from the errno of the write (explain_connect_failure: ETIMEDOUT, EKEYREJECTED, EHOSTUNREACH,
// ENETUNREACH, ECONNRESET, EIO, ...).  libnvme 1.3, src/nvme/fabrics.c, __nvmf_add_ctrl(): a
// failed write() is mapped to its own codes, EALREADY/EINVAL/EADDRINUSE/ENODEV/EOPNOTSUPP/
// ECONNREFUSED to ENVME_CONNECT_<name>, and every other errno to ENVME_CONNECT_WRITE; the
// kernel's errno is then only in a LOG_NOTICE message (nvme_msg), not returned, so the cause
// of a timeout, a refused authentication or an unreachable host is lost.  Its open() failure
// (EACCES vs ENOENT: permission vs module not loaded) folds into ENVME_CONNECT_OPEN the same way.
// nvmf_add_ctrl() also builds the option string from a nvme_ctrl_t, which would bypass rnvme's
// own option string (build_option_string: validated, redacted for display, pinned by tests).
Result<std::string> RealFabricsDevice::create(const std::string& options) {
  Fd fd(::open(kFabricsDevice, O_RDWR | O_CLOEXEC));
  if (!fd.valid()) return sys_error(fmt::format("cannot open {}", kFabricsDevice), errno);
  // One write carries the whole option string; the controller exists when it returns.
  ssize_t n = ::write(fd.get(), options.data(), options.size());
  if (n < 0) return sys_error(fmt::format("write to {} failed", kFabricsDevice), errno);
  char buf[256];
  ssize_t r = ::read(fd.get(), buf, sizeof buf - 1);
  if (r < 0) return sys_error(fmt::format("read from {} failed", kFabricsDevice), errno);
  return std::string(buf, static_cast<size_t>(r));
}

}  // namespace rnvme
