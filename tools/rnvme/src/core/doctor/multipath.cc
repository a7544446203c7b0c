// Check family multipath.*: rnvme's failover hold (Documentation/rnvme.rst, "Error recovery") on
// the subsystems this host reaches through two or more rnvme controllers.
#include "core/doctor.h"

#include <fmt/format.h>

#include "core/doctor/checks.h"

namespace rnvme {

using namespace doctor_detail;

namespace {

std::string ms_or_unknown(const std::optional<int64_t>& v) {
  return v ? fmt::format("{} ms", *v) : std::string("not reported");
}

}  // namespace

void check_multipath(const DoctorSnapshot& s, std::vector<DoctorCheck>& out) {
  const std::optional<bool>& hold = s.modules.rnvme_failover_hold;
  for (const auto& sub : s.subsystems) {
    if (sub.controllers.size() < 2) continue;  // one path: nothing to retry a write on meanwhile
    std::vector<std::string> names, holds;
    for (const auto& c : sub.controllers) {
      names.push_back(c.name);
      holds.push_back(fmt::format("{} {}", c.name, ms_or_unknown(c.failover_hold_ms)));
    }
    const std::string subject = sub.name.empty() || sub.name == "-" ? sub.nqn : sub.name;
    const std::string paths = fmt::format("{} ({}) has {} rnvme paths: {}", subject, sub.nqn,
                                          sub.controllers.size(), join(names));
    const std::string why =
        "writes in flight at a path loss are retried at once; a late write on the lost path can "
        "overwrite newer data";
    if (hold == false) {
      out.push_back(bad(Severity::kWarn, "multipath.failover_hold", subject,
                        paths + "; rnvme's failover hold is off (failover_hold=N)", why,
                        "echo Y > /sys/module/rnvme/parameters/failover_hold   (applies from the next path "
                        "loss; drop failover_hold=N from /etc/modprobe.d so that it stays on; keep it off "
                        "only for a target that fences a lost host itself)"));
      continue;  // with the hold off the CQT changes nothing
    }
    if (!hold) {
      out.push_back(bad(Severity::kWarn, "multipath.failover_hold", subject,
                        paths + "; the loaded rnvme.ko has no failover hold (no failover_hold parameter)",
                        why,
                        "install an rnvme.ko with the failover hold (make install, or the rnvme-dkms "
                        "package) and load it in place of this one"));
      continue;
    }
    out.push_back(ok("multipath.failover_hold", subject,
                     fmt::format("{}; failover hold on: {}", paths, join(holds))));

    // The hold is 2 (3 with traffic-based keep-alive) x KATO + CQT.  A controller that reports no
    // CQT (0 means "not reported", not "none") may still be quiescing what it began when the hold
    // ends; only a Cross-Controller Reset through a live path fences it for certain.  So a path
    // whose controller offers neither is a warning, though only the target can remove it.
    std::vector<std::string> neither, reported, ccr, unknown;
    for (const auto& c : sub.controllers) {
      const bool offers_ccr = c.ccr_offered && *c.ccr_offered != 0;
      if (!c.cqt_ms) unknown.push_back(c.name);
      else if (*c.cqt_ms > 0) reported.push_back(fmt::format("{} {} ms", c.name, *c.cqt_ms));
      else if (!offers_ccr) neither.push_back(c.name);
      if (offers_ccr) ccr.push_back(c.name);
    }
    std::vector<std::string> seen;
    if (!reported.empty()) seen.push_back(fmt::format("CQT {}, part of the hold", join(reported)));
    if (!ccr.empty())
      seen.push_back(fmt::format("{} offer{} Cross-Controller Reset (ccr_resets counts those that ended a hold)",
                                 join(ccr), ccr.size() == 1 ? "s" : ""));
    if (!unknown.empty())
      seen.push_back(fmt::format("{}: cqt_ms not reported by this rnvme.ko", join(unknown)));
    if (neither.empty()) {
      out.push_back(ok("multipath.cqt", subject, join(seen, "; ")));
      continue;
    }
    seen.insert(seen.begin(),
                fmt::format("{} report{} neither a Command Quiesce Time (cqt_ms 0) nor Cross-Controller "
                            "Reset (ccr_offered 0): the failover hold ends after 2-3 x KATO alone",
                            join(neither), neither.size() == 1 ? "s" : ""));
    out.push_back(bad(Severity::kWarn, "multipath.cqt", subject, join(seen, "; "),
                      "a controller that lost its host may still be executing a write it began when the "
                      "hold ends; without CQT the host cannot know how long that takes, and without CCR "
                      "it cannot fence it",
                      "ask the storage vendor for a firmware that reports CQT (NVMe 2.1, TP4129) or offers "
                      "Cross-Controller Reset (TP8028); rnvme uses either as soon as the target reports it "
                      "(rnvme/cqt_ms, rnvme/ccr_offered)"));
  }
}

}  // namespace rnvme
