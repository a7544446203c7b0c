// An exclusive advisory lock on a file (flock), held for the life of the object. connect-all
// takes one so that two runs (udev's and the boot unit's, or an admin's) do not interleave.
#pragma once

#include <chrono>
#include <string>

#include "core/result.h"
#include "sys/fd.h"

namespace rnvme {

class FileLock {
 public:
  // Creates the file (and its directory, mode 0755) if needed and waits up to `wait` for the
  // lock. The error names the path and, on a timeout, how long it waited.
  static Result<FileLock> acquire(const std::string& path, std::chrono::milliseconds wait);
  bool held() const { return fd_.valid(); }

 private:
  explicit FileLock(Fd fd) : fd_(std::move(fd)) {}
  Fd fd_;  // closing it releases the lock
};

}  // namespace rnvme
