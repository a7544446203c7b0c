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

// How a discovery controller is used (nvme-cli's discover/connect-all flags, on its command line
// or a discovery.conf line).
struct DiscoveryFlags {
  bool persistent = false;  // -p: kept connected after the log is read (keep-alive 30 s)
  bool force = false;       // --force: a new one even where a persistent one exists
};

struct ConfigEntry {
  std::string source;      // "discovery.conf:3", "config.json host 0 subsystem 1 port 0"
  ConnectOptions opts;
  std::string skip;        // non-empty: not to be connected, and why
  DiscoveryFlags discovery = {};
};

// Parses an argument line such as "-t rdma -a 10.0.0.1 -s 4420 --hostnqn=nqn..." into `opts`.
// With `flags` (a discovery.conf line), nvme-cli's discover options too: -p/--persistent and
// --force into `flags`; -o/--output-format, -v/--verbose and --quiet accepted and of no effect
// (connect-all prints its own results); -r/--raw refused (nvme-cli saves the log to a file
// instead of connecting).
Status parse_argument_line(std::string_view line, ConnectOptions& opts,
                           DiscoveryFlags* flags = nullptr);

// Lines: blank and '#' lines skipped. A line rnvme cannot use (an unknown option, a bad value, a
// secret it cannot honour) comes back with `skip` saying why: the file is nvme-cli's too, and one
// line must not stop the others.
Result<std::vector<ConfigEntry>> parse_discovery_conf(std::string_view text, std::string_view name);

// The instance of rnvme-connect@.service, "TRADDR_TRSVCID" (udev's NVME_TRADDR and
// NVME_TRSVCID joined by '_'; IPv6 addresses have no '_'), as a discovery controller to ask.
Result<ConfigEntry> parse_event_instance(std::string_view instance);

// The top level is nvme-cli's array of hosts (an object with "hosts" is accepted too). Ports of a
// transport other than rdma are returned as well; callers decide what to skip.  A port with a
// value rnvme cannot use (a malformed DH-HMAC-CHAP key included) comes back with `skip` set.
Result<std::vector<ConfigEntry>> parse_config_json(std::string_view text, std::string_view name);

// The config.json port that is the controller `opts` names, as nvme-cli looks it up: the same
// subsystem NQN, traddr and trsvcid (4420 when unset), an RDMA transport, and, where both name
// one, the same host NQN (`hostnqn`: the one in effect, from the command line or
// /etc/nvme/hostnqn) and host_traddr. The first such port, or nullptr.
const ConfigEntry* find_config_port(const std::vector<ConfigEntry>& entries,
                                    const ConnectOptions& opts, std::string_view hostnqn);

// `ports` in nvme-cli's config.json layout: a list of hosts ("hostnqn", "hostid") with their
// "subsystems" ("nqn"), each with its "ports" (the connect options that are set, by config.json's
// keys); grouped in the order first seen. DH-HMAC-CHAP keys are written as "(secret)". What
// parse_config_json() reads back, secrets aside.
std::string render_config_json(const std::vector<ConnectOptions>& ports);

// Fills what `into` leaves unset (an empty string, an unset number, a flag not given) from
// `from`; the controller's address (transport, traddr, trsvcid, nqn) stays `into`'s.
void fill_unset(ConnectOptions& into, const ConnectOptions& from);

}  // namespace rnvme
