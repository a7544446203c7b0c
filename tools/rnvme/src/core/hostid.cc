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

std::string hostnqn_for_uuid(std::string_view uuid) {
  return std::string(kUuidNqnPrefix) + lower(uuid);
}

std::optional<std::string> generated_hostnqn_problem(std::string_view generated) {
  const auto uuid = uuid_from_hostnqn(generated);
  if (!uuid)
    return fmt::format("'{}' is not a {}<uuid> host NQN", generated, kUuidNqnPrefix);
  if (*uuid == "00000000-0000-0000-0000-000000000000" ||
      *uuid == "ffffffff-ffff-ffff-ffff-ffffffffffff")
    return fmt::format("its UUID {} is a placeholder (the firmware's, or libnvme's when it has no "
                       "random bytes) that other hosts may carry too",
                       *uuid);
  return std::nullopt;
}

bool HostCheck::ok() const {
  return std::none_of(problems.begin(), problems.end(), [](const auto& p) { return p.fatal; });
}

HostCheck check_host_identity(const HostIdentityInput& in) {
  HostCheck hc;
  hc.hostnqn_source = in.hostnqn_source;
  hc.hostid_source = in.hostid_source;
  const std::string gen = "run 'rnvme hostnqn generate' (writes both files consistently)";

  // the host NQN in the file, or a stand-in for a missing or blank file, and what that NQN is
  // called when a host ID is taken from it
  std::string nqn_from = in.hostnqn_source;
  if (in.hostnqn) hc.hostnqn = trim(*in.hostnqn);
  if (hc.hostnqn.empty() && in.generated_hostnqn) {
    const std::string state = in.hostnqn ? "empty" : "missing";
    hc.hostnqn = *in.generated_hostnqn;
    hc.hostnqn_source = fmt::format("generated from the DMI product UUID; {} is {}",
                                    in.hostnqn_source, state);
    nqn_from = "the generated host NQN";
    hc.problems.push_back(
        {HostProblem::kGenerated, in.hostnqn_source,
         fmt::format("{}; using {}, the host NQN libnvme generates from this machine's DMI product "
                     "UUID, as nvme-cli does",
                     state, hc.hostnqn),
         fmt::format("write the host NQN to the file so that every tool uses the same one: "
                     "'rnvme hostnqn generate' (writes {} and {}; it does not need the output "
                     "redirected), or 'nvme gen-hostnqn > {}'",
                     in.hostnqn_source, in.hostid_source, in.hostnqn_source),
         false});
  } else if (!in.hostnqn) {
    hc.problems.push_back({HostProblem::kMissing, in.hostnqn_source, "missing", gen, true});
  } else {
    const std::string none =
        in.generated_problem.empty()
            ? std::string()
            : fmt::format(", and libnvme's generated host NQN cannot stand in: {}",
                          in.generated_problem);
    if (hc.hostnqn.empty())
      hc.problems.push_back({HostProblem::kEmpty, in.hostnqn_source, "empty" + none, gen, true});
    else if (auto why = nqn_refusal(hc.hostnqn))
      hc.problems.push_back({HostProblem::kInvalid, in.hostnqn_source,
                             fmt::format("'{}' is not a host NQN the kernel accepts: {}",
                                         hc.hostnqn, *why),
                             gen, true});
    else if (auto odd = nqn_oddity(hc.hostnqn))
      hc.problems.push_back({HostProblem::kNonStandard, in.hostnqn_source, *odd, gen, false});
  }

  const bool nqn_usable = !hc.hostnqn.empty() && is_valid_nqn(hc.hostnqn);
  if (!in.hostid) {
    if (auto u = nqn_usable ? uuid_from_hostnqn(hc.hostnqn) : std::nullopt) {
      // nvme-cli does the same.  Without it Linux 6.12 would pair the host NQN with its default
      // host's ID and refuse the connect (see kUnpaired).
      hc.hostid = *u;
      hc.hostid_source = fmt::format("the UUID in {}", nqn_from);
      hc.problems.push_back(
          {HostProblem::kMissing, in.hostid_source,
           fmt::format("missing; using {}, the UUID in the host NQN (as nvme-cli does)", *u),
           fmt::format("nothing to do; write {} to {} to make it explicit", *u, in.hostid_source),
           false});
    } else if (nqn_usable) {
      hc.problems.push_back(
          {HostProblem::kUnpaired, in.hostid_source,
           fmt::format("missing, and host NQN {} carries no UUID to take instead: Linux 6.12 then "
                       "pairs the host NQN with its default host's ID, which already belongs to "
                       "another host NQN, and refuses the connect (EINVAL); 6.1 picks a random "
                       "host ID on every connect",
                       hc.hostnqn),
           fmt::format("write a UUID to {} (e.g. 'uuidgen > {}') or pass --hostid", in.hostid_source,
                       in.hostid_source),
           false});
    } else {
      // Neither half: the kernel's default host supplies both.
      hc.problems.push_back({HostProblem::kMissing, in.hostid_source,
                             "missing; the kernel will pick a host ID itself", gen, false});
    }
  } else {
    hc.hostid = lower(trim(*in.hostid));
    if (hc.hostid.empty())
      hc.problems.push_back({HostProblem::kEmpty, in.hostid_source, "empty", gen, true});
    else if (!is_valid_uuid(hc.hostid))
      hc.problems.push_back({HostProblem::kInvalid, in.hostid_source,
                             fmt::format("'{}' is not a UUID", hc.hostid), gen,
                             true});
    else if (!in.hostnqn && !in.generated_hostnqn)
      hc.problems.push_back(
          {HostProblem::kUnpaired, in.hostid_source,
           fmt::format("host ID {} without a host NQN ({} is missing): Linux 6.12 then pairs it "
                       "with its default host's NQN, which already has another host ID, and "
                       "refuses the connect (EINVAL)",
                       hc.hostid, in.hostnqn_source),
           fmt::format("write a host NQN to {} or pass --hostnqn ('rnvme hostnqn generate' writes "
                       "both files)",
                       in.hostnqn_source),
           false});
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
  if (hostnqn.empty() || id.empty()) return std::nullopt;
  for (const auto& c : in_use) {
    const std::string cid = lower(trim(c.hostid));
    const std::string cnqn = trim(c.hostnqn);
    if (cnqn.empty() || cid.empty()) continue;
    if (cnqn == hostnqn && cid != id)
      return HostProblem{
          HostProblem::kInUse, "--hostid",
          fmt::format("controller {} already uses host NQN {} with host ID {}, and this connect "
                      "would use host ID {}: Linux 6.12 refuses one host NQN with two host IDs "
                      "(EINVAL); 6.1 accepts it but gives {} and every other controller of that "
                      "host NQN the new host ID, so the targets see them change identity",
                      c.controller, cnqn, cid, id, c.controller),
          fmt::format("connect with --hostid={} (the ID {} uses), or disconnect every controller "
                      "using {} before changing its host ID",
                      cid, c.controller, cnqn),
          true};
    if (cid == id && cnqn != hostnqn)
      return HostProblem{
          HostProblem::kInUse, "--hostnqn",
          fmt::format("controller {} already uses host ID {} with host NQN {}, and this connect "
                      "would use it with host NQN {}: Linux 6.12 refuses one host ID with two "
                      "host NQNs (EINVAL); a host ID names one host",
                      c.controller, cid, cnqn, hostnqn),
          fmt::format("connect with --hostnqn={} (the NQN {} uses), or give host NQN {} its own "
                      "--hostid, or disconnect {} first",
                      cnqn, c.controller, hostnqn, c.controller),
          true};
  }
  return std::nullopt;
}

}  // namespace rnvme
