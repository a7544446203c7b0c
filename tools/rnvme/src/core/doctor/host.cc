// Check family host.*: the host NQN and host ID, and the identities fabrics controllers use.
#include "core/doctor.h"

#include <fmt/format.h>

#include "core/doctor/checks.h"

namespace rnvme {

using namespace doctor_detail;

// ------------------------------------------------------------------ host identity

void check_host(const DoctorSnapshot& s, std::vector<DoctorCheck>& out) {
  const HostCheck hc = check_host_identity(s.host);
  struct Part {
    const char* id;
    std::string source;
    std::string value;
  };
  for (const Part& part : {Part{"host.hostnqn", s.host.hostnqn_source, hc.hostnqn},
                           Part{"host.hostid", s.host.hostid_source, hc.hostid}}) {
    std::vector<const HostProblem*> mine;
    for (const auto& p : hc.problems)
      if (p.source == part.source && p.kind != HostProblem::kMismatch) mine.push_back(&p);
    if (mine.empty()) {
      out.push_back(ok(part.id, part.source, fmt::format("{} (well formed)", part.value)));
      continue;
    }
    for (const HostProblem* p : mine) {
      // A missing file is a warning (connect goes ahead: the generated host NQN, or the kernel's
      // default host), and so is a blank host NQN file (the generated one stands in, as with
      // nvme-cli); an unusable one is a failure.
      const bool blank_hostnqn =
          p->kind == HostProblem::kEmpty && part.source == s.host.hostnqn_source;
      Severity sev = p->fatal && p->kind != HostProblem::kMissing && !blank_hostnqn
                         ? Severity::kFail
                         : Severity::kWarn;
      std::string why;
      switch (p->kind) {
        case HostProblem::kMissing:
          why = part.source == std::string(kHostidPath)
                    ? "tools that read only the host ID file, and the kernel's default host, then use "
                      "another host ID than this one: targets that key reservations or ACLs on the "
                      "host ID see a different host"
                    : "connect then uses the host NQN libnvme generates from the DMI product UUID, "
                      "as nvme-cli does, or, where there is none to use, the kernel's default host "
                      "NQN, which changes with every boot; tools that read the file see none";
          break;
        case HostProblem::kEmpty:
          if (!blank_hostnqn) {
            why = "the kernel refuses the connect with this value (EINVAL), or rnvme connect "
                  "stops before it";
            break;
          }
          why = "connect uses the host NQN libnvme generates from the DMI product UUID instead, "
                "as nvme-cli does (and stops when that is a placeholder); tools that read the "
                "file see none";
          break;
        case HostProblem::kUnpaired:
          why = "Linux 6.12 refuses a host NQN and host ID that do not pair up (EINVAL)";
          break;
        case HostProblem::kNonStandard:
          why = "targets and tools may reject an NQN that is not in an NVMe form";
          break;
        default:
          why = "the kernel refuses the connect with this value (EINVAL), or rnvme connect stops before it";
          break;
      }
      // hostid.cc's fix for a host ID taken from the host NQN is "nothing to do" (for connect);
      // the doctor warns, so it gives the command that makes the ID explicit.
      std::string fix = p->kind == HostProblem::kMissing && !part.value.empty()
                            ? fmt::format("echo {} > {}", part.value, part.source)
                            : p->fix;
      out.push_back(bad(sev, part.id, part.source, p->problem, why, fix));
    }
  }
  for (const auto& p : hc.problems)
    if (p.kind == HostProblem::kMismatch)
      out.push_back(ok("host.consistency", s.host.hostid_source,
                       p.problem));
  if (hc.ok() && !hc.hostnqn.empty() && !hc.hostid.empty()) {
    if (auto c = find_host_conflict(hc.hostnqn, hc.hostid, s.host_in_use)) {
      out.push_back(bad(Severity::kFail, "host.in_use", "", c->problem,
                        "the kernel keeps one host ID per host NQN across fabrics controllers", c->fix));
    } else {
      out.push_back(ok("host.in_use", "",
                       s.host_in_use.empty()
                           ? std::string("no fabrics controllers yet")
                           : fmt::format("the {} fabrics controller(s) use this identity or another host's",
                                         s.host_in_use.size())));
    }
  }
}

}  // namespace rnvme
