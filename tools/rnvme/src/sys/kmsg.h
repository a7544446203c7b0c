// The kernel's messages for one attempt: take a position in /dev/kmsg before acting, read what
// was logged after it.
#pragma once

#include <string>
#include <vector>

#include "sys/fd.h"

namespace rnvme {

class KernelLog {
 public:
  virtual ~KernelLog() = default;
  virtual void mark() = 0;
  // Connect-related messages logged since mark(), oldest first.
  virtual std::vector<std::string> since_mark() = 0;
};

class RealKernelLog final : public KernelLog {
 public:
  void mark() override;
  std::vector<std::string> since_mark() override;

 private:
  Fd fd_;
};

class FakeKernelLog final : public KernelLog {
 public:
  void mark() override { mark_ = lines.size(); }
  std::vector<std::string> since_mark() override {
    return {lines.begin() + static_cast<long>(std::min(mark_, lines.size())), lines.end()};
  }
  void emit(std::string line) { lines.push_back(std::move(line)); }
  std::vector<std::string> lines;

 private:
  size_t mark_ = 0;
};

}  // namespace rnvme
