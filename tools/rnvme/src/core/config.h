// /etc/nvme/discovery.conf (one nvme-cli argument line per discovery controller) and nvme-cli's
// /etc/nvme/config.json (hosts -> subsystems -> ports).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/options.h"
#include "core/result.h"

namespace rnvme {

inline constexpr std::string_view kDiscoveryConfPath = "/etc/nvme/discovery.conf";
inline constexpr std::string_view kConfigJsonPath = "/etc/nvme/config.json";

struct ConfigEntry {
  std::string source;      // "discovery.conf:3", "config.json host 0 subsystem 1 port 0"
  ConnectOptions opts;
  std::string skip;        // non-empty: not to be connected, and why
};

// Parses an argument line such as "-t rdma -a 10.0.0.1 -s 4420 --hostnqn=nqn..." into `opts`.
Status parse_argument_line(std::string_view line, ConnectOptions& opts);

// Lines: blank and '#' lines skipped. A line rnvme cannot use (an unknown option, a bad value, a
// secret it cannot honour) comes back with `skip` saying why: the file is nvme-cli's too, and one
// line must not stop the others.
Result<std::vector<ConfigEntry>> parse_discovery_conf(std::string_view text, std::string_view name);

// The instance of rnvme-connect@.service, "TRADDR_TRSVCID" (udev's NVME_TRADDR and
// NVME_TRSVCID joined by '_'; IPv6 addresses have no '_'), as a discovery controller to ask.
Result<ConfigEntry> parse_event_instance(std::string_view instance);

// The top level is nvme-cli's array of hosts (an object with "hosts" is accepted too). Ports of a
// transport other than rdma are returned as well; callers decide what to skip.  A port with an
// in-band authentication key comes back with `skip` set: rnvme cannot authenticate yet, and must
// not connect without the authentication the key asks for.
Result<std::vector<ConfigEntry>> parse_config_json(std::string_view text, std::string_view name);

}  // namespace rnvme
