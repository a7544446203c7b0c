#include "core/hostid.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/options.h"

namespace rnvme {

std::string trim(std::string_view s) {
  auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  auto last = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(first, last - first + 1));
}

std::optional<std::string> nqn_refusal(std::string_view nqn) {
  if (nqn.empty()) return "it is empty";
  if (nqn.size() > kNqnMaxLen)
    return fmt::format("it is {} bytes long; the kernel takes at most {} (NVMF_NQN_SIZE {} with "
                       "the terminating NUL)",
                       nqn.size(), kNqnMaxLen, kNqnMaxLen + 1);
  if (nqn.find(',') != std::string_view::npos)
    return "it contains a comma, which would end the option in the string written to "
           "/dev/nvme-fabrics";
  if (nqn.find('\n') != std::string_view::npos)
    return "it contains a newline, which would end the option in the string written to "
           "/dev/nvme-fabrics";
  if (nqn.find('\0') != std::string_view::npos)
    return "it contains a NUL byte, which would end the string written to /dev/nvme-fabrics";
  return std::nullopt;
}

bool is_valid_nqn(std::string_view nqn) { return !nqn_refusal(nqn); }

namespace {

bool all_digits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// "org.nvmexpress", "io.rnvme": dot-separated labels of letters, digits and hyphens.
bool is_reverse_domain(std::string_view d) {
  if (d.empty()) return false;
  while (true) {
    auto dot = d.find('.');
    auto label = d.substr(0, dot);
    if (label.empty() || !std::all_of(label.begin(), label.end(), [](unsigned char c) {
          return std::isalnum(c) || c == '-';
        }))
      return false;
    if (dot == std::string_view::npos) return true;
    d.remove_prefix(dot + 1);
  }
}

}  // namespace

std::optional<std::string> nqn_oddity(std::string_view nqn) {
  const auto tail = " the kernel accepts it, some targets and tools may not";
  // Bytes above 0x7f are let through: the NVMe spec allows UTF-8 in an NQN.
  if (std::any_of(nqn.begin(), nqn.end(), [](unsigned char c) { return c <= 0x20 || c == 0x7f; }))
    return fmt::format("'{}' contains spaces or control characters;{}", nqn, tail);
  if (nqn == kDiscoveryNqn) return std::nullopt;
  const auto form = fmt::format(
      "'{}' is not in the NVMe form nqn.yyyy-mm.<reverse domain>:<name> (or {}<uuid>);{}", nqn,
      kUuidNqnPrefix, tail);
  // nqn. yyyy - mm . domain : name
  if (nqn.size() < 12 || nqn.substr(0, 4) != "nqn." || !all_digits(nqn.substr(4, 4)) ||
      nqn[8] != '-' || !all_digits(nqn.substr(9, 2)) || nqn[11] != '.')
    return form;
  const int month = (nqn[9] - '0') * 10 + (nqn[10] - '0');
  if (month < 1 || month > 12) return form;
  const auto rest = nqn.substr(12);
  const auto colon = rest.find(':');
  if (colon == std::string_view::npos || colon + 1 == rest.size() ||
      !is_reverse_domain(rest.substr(0, colon)))
    return form;
  if (nqn.substr(0, kUuidNqnPrefix.size()) == kUuidNqnPrefix &&
      !is_valid_uuid(nqn.substr(kUuidNqnPrefix.size())))
    return fmt::format("'{}' has the {}<uuid> prefix but no UUID after it;{}", nqn,
                       kUuidNqnPrefix, tail);
  return std::nullopt;
}

bool is_valid_uuid(std::string_view u) {
  if (u.size() != 36) return false;
  for (size_t i = 0; i < u.size(); i++) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? u[i] != '-' : !std::isxdigit(static_cast<unsigned char>(u[i]))) return false;
  }
  return true;
}

static std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::optional<std::string> uuid_from_hostnqn(std::string_view hostnqn) {
  if (hostnqn.substr(0, kUuidNqnPrefix.size()) != kUuidNqnPrefix) return std::nullopt;
  auto u = hostnqn.substr(kUuidNqnPrefix.size());
  if (!is_valid_uuid(u)) return std::nullopt;
  return lower(u);
}

std::string format_uuid_v4(std::array<uint8_t, 16> b) {
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  return fmt::format("{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
                     "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                     b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
                     b[12], b[13], b[14], b[15]);
}

std::string hostnqn_for_uuid(std::string_view uuid) {
  return std::string(kUuidNqnPrefix) + lower(uuid);
}

bool HostCheck::ok() const {
  return std::none_of(problems.begin(), problems.end(), [](const auto& p) { return p.fatal; });
}

HostCheck check_host_identity(const HostIdentityInput& in) {
  HostCheck hc;
  hc.hostnqn_source = in.hostnqn_source;
  hc.hostid_source = in.hostid_source;
  const std::string gen = "run 'rnvme hostnqn generate' (writes both files consistently)";

  if (!in.hostnqn) {
    hc.problems.push_back({HostProblem::kMissing, in.hostnqn_source, "missing", gen, true});
  } else {
    hc.hostnqn = trim(*in.hostnqn);
    if (hc.hostnqn.empty())
      hc.problems.push_back({HostProblem::kEmpty, in.hostnqn_source, "empty", gen, true});
    else if (auto why = nqn_refusal(hc.hostnqn))
      hc.problems.push_back({HostProblem::kInvalid, in.hostnqn_source,
                             fmt::format("'{}' is not a host NQN the kernel accepts: {}",
                                         hc.hostnqn, *why),
                             gen, true});
    else if (auto odd = nqn_oddity(hc.hostnqn))
      hc.problems.push_back({HostProblem::kNonStandard, in.hostnqn_source, *odd, gen, false});
  }

  if (!in.hostid) {
    // The kernel then uses a random (6.1) or the default host's (6.12) hostid: connections still
    // work but the host looks different to the target on every boot.
    hc.problems.push_back({HostProblem::kMissing, in.hostid_source, "missing; the kernel will pick a host ID itself",
                           gen, false});
  } else {
    hc.hostid = lower(trim(*in.hostid));
    if (hc.hostid.empty())
      hc.problems.push_back({HostProblem::kEmpty, in.hostid_source, "empty", gen, true});
    else if (!is_valid_uuid(hc.hostid))
      hc.problems.push_back({HostProblem::kInvalid, in.hostid_source,
                             fmt::format("'{}' is not a UUID", hc.hostid), gen,
                             true});
  }

  if (hc.ok() && !hc.hostid.empty()) {
    if (auto u = uuid_from_hostnqn(hc.hostnqn); u && *u != hc.hostid) {
      // No rule of the kernel or the spec ties the two (Debian's nvme-cli package writes two
      // unrelated UUIDs): a note, not an error.  The kernel's real rule is checked against the
      // controllers that exist (find_host_conflict).
      hc.problems.push_back(
          {HostProblem::kMismatch, in.hostid_source,
           fmt::format("hostid {} is not the UUID {} in hostnqn {} (from {}); the kernel does not "
                       "require it",
                       hc.hostid, *u, hc.hostnqn, in.hostnqn_source),
           fmt::format("nothing to do; to make them agree write {} to {}", *u, in.hostid_source),
           false});
    }
  }
  return hc;
}

std::optional<HostProblem> find_host_conflict(std::string_view hostnqn, std::string_view hostid,
                                              const std::vector<HostInUse>& in_use) {
  const std::string id = lower(hostid);
  for (const auto& c : in_use) {
    const std::string cid = lower(trim(c.hostid));
    const std::string cnqn = trim(c.hostnqn);
    if (cnqn.empty() || cid.empty()) continue;
    // `key` (NQN or ID) is shared, `other` differs: the option to change is the other one's
    auto conflict = [&](std::string_view key, std::string_view key_value, std::string_view other,
                        std::string_view option, const std::string& other_value) {
      return HostProblem{HostProblem::kInUse, std::string(option),
                         fmt::format("controller {} already uses host {} {} with host {} {}; the "
                                     "kernel refuses one host {} with two host {}s",
                                     c.controller, key, key_value, other, other_value, key, other),
                         fmt::format("connect with {}={} (or disconnect {} first)", option,
                                     other_value, c.controller),
                         true};
    };
    if (!hostnqn.empty() && cnqn == hostnqn && !id.empty() && cid != id)
      return conflict("NQN", cnqn, "ID", "--hostid", cid);
    if (!id.empty() && cid == id && !hostnqn.empty() && cnqn != hostnqn)
      return conflict("ID", cid, "NQN", "--hostnqn", cnqn);
  }
  return std::nullopt;
}

}  // namespace rnvme
