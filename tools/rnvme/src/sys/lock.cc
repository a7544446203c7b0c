#include "sys/lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace rnvme {

Result<FileLock> FileLock::acquire(const std::string& path, std::chrono::milliseconds wait) {
  auto slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    const std::string dir = path.substr(0, slash);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      Error e = make_error(ErrorCode::kEnvironment, fmt::format("cannot create {}: {}", dir,
                                                                std::strerror(errno)),
                           {}, "run as root, or pass --lock-file with a writable path");
      e.sys_errno = errno;
      return e;
    }
  }
  Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    Error e = make_error(ErrorCode::kEnvironment,
                         fmt::format("cannot open lock file {}: {}", path, std::strerror(errno)),
                         {}, "run as root, or pass --lock-file with a writable path");
    e.sys_errno = errno;
    return e;
  }
  const auto until = std::chrono::steady_clock::now() + wait;
  for (;;) {
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) return FileLock(std::move(fd));
    if (errno != EWOULDBLOCK && errno != EINTR) {
      Error e = make_error(ErrorCode::kFailure,
                           fmt::format("cannot lock {}: {}", path, std::strerror(errno)));
      e.sys_errno = errno;
      return e;
    }
    if (std::chrono::steady_clock::now() >= until)
      return make_error(
          ErrorCode::kFailure,
          fmt::format("another connect-all still holds {} after {} s", path,
                      std::chrono::duration_cast<std::chrono::seconds>(wait).count()),
          "another rnvme connect-all (udev's, the boot unit's, or a person's) is still connecting",
          "wait for it to finish ('fuser -v " + path + "' shows it), then run again");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace rnvme
