// Admin commands on a controller's character device, through libnvme 1.x (the only file that
// calls into a device through libnvme; src/core uses only its name and status tables).
#pragma once

#include <cstdint>
#include <algorithm>
#include <map>
#include <span>
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

// One Get Log Page command for the discovery log (LID 0x70) on an open discovery controller:
// buf.size() bytes of the log from `offset`. `rae` is the command's Retain Asynchronous Event bit:
// with it clear the target clears its discovery-log-change event, and only then announces the next
// change (nvmet re-arms its AEN on a read with RAE=0 alone, nvmet_clear_aen_bit()).
class DiscoveryLogCommand {
 public:
  virtual ~DiscoveryLogCommand() = default;
  virtual Status get_log(uint32_t offset, std::span<uint8_t> buf, bool rae) = 0;
};

// The whole discovery log of `device` (named in errors): the header, then header and entries,
// then the header again to confirm the generation counter, retried while the log changes.  Every
// read keeps the event (RAE=1) but the confirming one, the last of a read that succeeds, which
// clears it (RAE=0), as libnvme's nvmf_get_discovery_log() ends on a read with RAE=0: a persistent
// discovery controller then announces every later change, not only the first.
Result<std::vector<uint8_t>> read_discovery_log(DiscoveryLogCommand& cmd, const std::string& device);

// The version of the libnvme loaded (nvme_get_version(NVME_VERSION_PROJECT)), or "" when it
// gives none.
std::string libnvme_runtime_version();

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

// Serves the discovery log from `pages`: read i sees pages[min(i, pages.size() - 1)], so a log
// that changes between reads is a list of pages.  Records every command with its RAE bit.
class FakeDiscoveryLogCommand final : public DiscoveryLogCommand {
 public:
  struct Read {
    uint32_t offset;
    size_t len;
    bool rae;
  };
  Status get_log(uint32_t offset, std::span<uint8_t> buf, bool rae) override {
    const size_t i = std::min(reads.size(), pages.size() - 1);
    reads.push_back({offset, buf.size(), rae});
    if (fail_from && reads.size() >= fail_from) return make_error(ErrorCode::kFailure, "fake read failed");
    const auto& page = pages.at(i);
    for (size_t k = 0; k < buf.size(); k++)
      buf[k] = offset + k < page.size() ? page[offset + k] : 0;
    return Ok{};
  }
  std::vector<std::vector<uint8_t>> pages;
  std::vector<Read> reads;
  size_t fail_from = 0;  // the n-th read (1-based) and every later one fail; 0: none
};

}  // namespace rnvme
