// /dev/nvme-fabrics: write an option string, read back "instance=N,cntlid=M".
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/result.h"

namespace rnvme {

inline constexpr const char* kFabricsDevice = "/dev/nvme-fabrics";

class FabricsDevice {
 public:
  virtual ~FabricsDevice() = default;
  // The kernel's reply text; on failure an Error with sys_errno of the failed open/write.
  virtual Result<std::string> create(const std::string& options) = 0;
};

class RealFabricsDevice final : public FabricsDevice {
 public:
  Result<std::string> create(const std::string& options) override;
};

class FakeFabricsDevice final : public FabricsDevice {
 public:
  Result<std::string> create(const std::string& options) override {
    written.push_back(options);
    return handler ? handler(options) : Result<std::string>(std::string("instance=0,cntlid=1\n"));
  }
  std::function<Result<std::string>(const std::string&)> handler;
  std::vector<std::string> written;
};

}  // namespace rnvme
