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
