// The Discovery Log Page (NVMe over Fabrics, log identifier 70h), decoded from raw bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/result.h"

namespace rnvme {

inline constexpr size_t kDiscoveryHeaderSize = 1024;  // genctr, numrec, recfmt, reserved
inline constexpr size_t kDiscoveryEntrySize = 1024;

struct DiscoveryEntry {
  uint8_t trtype = 0;
  uint8_t adrfam = 0;
  uint8_t subtype = 0;
  uint8_t treq = 0;
  uint16_t portid = 0;
  uint16_t cntlid = 0;
  uint16_t asqsz = 0;
  uint16_t eflags = 0;
  std::string trsvcid;
  std::string subnqn;
  std::string traddr;
  // Transport-specific address subtype; meaningful for RDMA only.
  uint8_t rdma_qptype = 0;
  uint8_t rdma_prtype = 0;
  uint8_t rdma_cms = 0;
  uint16_t rdma_pkey = 0;
};

struct DiscoveryLog {
  uint64_t genctr = 0;
  uint64_t numrec = 0;
  uint16_t recfmt = 0;
  std::vector<DiscoveryEntry> entries;
};

struct DiscoveryHeader {
  uint64_t genctr = 0;
  uint64_t numrec = 0;
};
Result<DiscoveryHeader> decode_discovery_header(std::span<const uint8_t> bytes);
// Decodes a whole log page; numrec beyond the bytes supplied is an error, not a crash.
Result<DiscoveryLog> decode_discovery_log(std::span<const uint8_t> bytes);

std::string trtype_name(uint8_t v);
std::string adrfam_name(uint8_t v);
std::string subtype_name(uint8_t v);
std::string treq_name(uint8_t v);
std::string rdma_qptype_name(uint8_t v);
std::string rdma_prtype_name(uint8_t v);
std::string rdma_cms_name(uint8_t v);

inline constexpr uint8_t kTrtypeRdma = 1;
inline constexpr uint8_t kSubtypeReferral = 1;
inline constexpr uint8_t kSubtypeNvme = 2;
inline constexpr uint8_t kSubtypeCurrentDiscovery = 3;
// eflags bit 0, DUPRETINFO: the discovery controller of this entry returns the same information
// as the one whose log lists it.
inline constexpr uint16_t kEflagsDupRetInfo = 1;
// treq bit 2 (NVMF_TREQ_DISABLE_SQFLOW): the controller can run without SQ flow control.
inline constexpr uint8_t kTreqDisableSqflow = 4;

// The connect options of log entry `e`: its address and NQN on the options `tmpl` of the
// discovery controller that listed it (host identity, host address, tunables).  An entry whose
// treq has kTreqDisableSqflow is connected with disable_sqflow, as libnvme 1.3's
// nvmf_connect_disc_entry() does.
ConnectOptions entry_connect_options(const ConnectOptions& tmpl, const DiscoveryEntry& e);

}  // namespace rnvme
