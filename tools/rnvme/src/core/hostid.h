// Host identity: /etc/nvme/hostnqn and /etc/nvme/hostid, and whether they agree.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnvme {

inline constexpr std::string_view kHostnqnPath = "/etc/nvme/hostnqn";
inline constexpr std::string_view kHostidPath = "/etc/nvme/hostid";
inline constexpr std::string_view kUuidNqnPrefix = "nqn.2014-08.org.nvmexpress:uuid:";

// Why the kernel would refuse `nqn` as nqn= or hostnqn= (nvmf_parse_options, Linux 6.1 and 6.12):
// empty (the "%s" token needs a value), 223 bytes or more (NVMF_NQN_SIZE with its NUL), or a byte
// that ends the option in the string written to /dev/nvme-fabrics (',' and '\n' separate options,
// NUL ends the string).  nullopt: the kernel takes it; it checks nothing else, not the NVMe form.
std::optional<std::string> nqn_refusal(std::string_view nqn);
bool is_valid_nqn(std::string_view nqn);  // !nqn_refusal(nqn)
// Why an NQN the kernel accepts is not in an NVMe form, for a warning; nullopt when it is in one:
// "nqn.yyyy-mm.<reverse domain>:<name>", "nqn.2014-08.org.nvmexpress:uuid:<uuid>", or the
// well-known discovery NQN "nqn.2014-08.org.nvmexpress.discovery".
std::optional<std::string> nqn_oddity(std::string_view nqn);
bool is_valid_uuid(std::string_view uuid);
// The UUID of a "nqn.2014-08.org.nvmexpress:uuid:<uuid>" host NQN, lower-cased.
std::optional<std::string> uuid_from_hostnqn(std::string_view hostnqn);
std::string hostnqn_for_uuid(std::string_view uuid);
// What libnvme's nvmf_hostnqn_generate() gave, and whether it gives the same one again: its UUID is
// the machine's (DMI product UUID, device tree), not the random one it falls back to, new on
// every call.
struct GeneratedHostnqn {
  std::string nqn;
  bool stable = true;
};

// Why the host NQN `generated` (libnvme's nvmf_hostnqn_generate(): the DMI product UUID, else the
// device tree's partition UUID, else a random one) must not be written, or nullopt.  libnvme 1.3
// takes whatever UUID the firmware reports and falls back to the nil UUID when it cannot get
// random bytes; the nil and all-ones UUIDs are firmware placeholders many machines share, and a
// host NQN shared between hosts makes them one host to every target.
std::optional<std::string> generated_hostnqn_problem(std::string_view generated);
// Strips the trailing newline and surrounding blanks that editors and `echo` leave behind.
std::string trim(std::string_view s);

// What was found on disk (or given on the command line); nullopt = file missing.
struct HostIdentityInput {
  std::optional<std::string> hostnqn;
  std::optional<std::string> hostid;
  std::string hostnqn_source = std::string(kHostnqnPath);
  std::string hostid_source = std::string(kHostidPath);
  // nvme-cli 2.4's stand-in (fabrics.c: nvmf_hostnqn_from_file(), else nvmf_hostnqn_generate())
  // for a host NQN file that is missing or blank: libnvme's generated host NQN, already checked
  // (generated_hostnqn_problem); nullopt: none, and `generated_problem` says why when one was
  // tried.  The kernel's default host is used only when there is none.
  std::optional<std::string> generated_hostnqn = std::nullopt;
  std::string generated_problem = {};
};

struct HostProblem {
  // kUnpaired: one half of the identity without the other, which Linux 6.12 completes from its
  // default host and then refuses; a warning, since 6.1 takes it.
  // kGenerated: the host NQN file is missing or blank and libnvme's generated host NQN stands in
  // (HostIdentityInput::generated_hostnqn), as with nvme-cli; a warning.
  enum Kind { kMissing, kEmpty, kInvalid, kMismatch, kNonStandard, kInUse, kUnpaired, kGenerated };
  Kind kind = kInvalid;
  std::string source;   // file or option at fault
  std::string problem;
  std::string fix;
  bool fatal = true;    // false: a warning, connect can proceed
};

struct HostCheck {
  std::string hostnqn;  // trimmed, possibly empty
  std::string hostid;
  std::string hostnqn_source;
  std::string hostid_source;
  std::vector<HostProblem> problems;
  bool ok() const;
};

HostCheck check_host_identity(const HostIdentityInput& in);

// The kernel's rule (nvmf_host_add, Linux 6.12): one host NQN goes with one host ID across all
// fabrics controllers.  A controller that already uses @hostnqn with another ID, or @hostid with
// another NQN, makes a new connect fail with EINVAL on 6.12; 6.1 takes the first case and
// overwrites the shared host's ID (every controller of that NQN changes identity), and the second
// case gives one host ID to two hosts.  This names the controller and the value to use.  With
// either value unknown (the kernel's default host) nothing is reported.
struct HostInUse {
  std::string controller;   // nvme0
  std::string hostnqn, hostid;
};
std::optional<HostProblem> find_host_conflict(std::string_view hostnqn, std::string_view hostid,
                                              const std::vector<HostInUse>& in_use);

}  // namespace rnvme
