// Admin commands on a controller's character device, through libnvme 1.x (the only file that
// calls into a device through libnvme; src/core uses only its name and status tables).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"

namespace rnvme {

class DiscoveryLogSource {
 public:
  virtual ~DiscoveryLogSource() = default;
  // The whole discovery log page (header + numrec entries) of controller `device` ("nvme3").
  virtual Result<std::vector<uint8_t>> read(const std::string& device) = 0;
};

class LibnvmeDiscoveryLogSource final : public DiscoveryLogSource {
 public:
  Result<std::vector<uint8_t>> read(const std::string& device) override;
};

class FakeDiscoveryLogSource final : public DiscoveryLogSource {
 public:
  Result<std::vector<uint8_t>> read(const std::string& device) override {
    reads.push_back(device);
    auto it = pages.find(device);
    if (it == pages.end()) return make_error(ErrorCode::kNotFound, "no such fake device " + device);
    return it->second;
  }
  std::map<std::string, std::vector<uint8_t>> pages;
  std::vector<std::string> reads;
};

}  // namespace rnvme
