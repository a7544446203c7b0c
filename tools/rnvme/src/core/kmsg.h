// Records of /dev/kmsg ("prio,seq,usec,flags;text"), and which of them concern a connect attempt.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rnvme {

struct KmsgRecord {
  int level = 0;          // syslog level, 0 (emerg) .. 7 (debug)
  uint64_t seq = 0;
  uint64_t usec = 0;      // since boot
  std::string text;       // message text, continuation lines dropped
};

std::optional<KmsgRecord> parse_kmsg_record(std::string_view raw);

// True for messages from the NVMe, fabrics, RDMA CM and rnvme code paths.
bool is_connect_related(std::string_view text);

}  // namespace rnvme
