#include "core/doctor.h"

#include <gtest/gtest.h>

#include "core/doctor/test_support.h"

namespace rnvme {
namespace {

using namespace doctor_test;

// The Soft-RoCE host with one subsystem reached through `cqts.size()` rnvme controllers
// (nvme0, nvme1, ...), each with that CQT and a 15 s hold, and failover_hold as given.
// `ccr` gives each path's ccr_offered (none: the file is absent).
DoctorSnapshot with_paths(std::optional<bool> hold, std::vector<std::optional<int64_t>> cqts,
                          std::vector<std::optional<int64_t>> ccr = {}) {
  auto s = softroce();
  s.modules.rnvme_failover_hold = hold;
  RnvmeSubsystem sub{"nvme-subsys0", "nqn.2024-01.io.rnvme:target1", {}};
  for (size_t i = 0; i < cqts.size(); i++)
    sub.controllers.push_back({"nvme" + std::to_string(i), cqts[i], hold == true ? 15000 : 0,
                               i < ccr.size() ? ccr[i] : std::nullopt});
  s.subsystems.push_back(sub);
  return s;
}

TEST(DoctorMultipath, HoldOffOnTwoPathsWarns) {
  const auto r = run_doctor_checks(with_paths(false, {0, 0}));
  const DoctorCheck& c = one(r, "multipath.failover_hold", "nvme-subsys0");
  EXPECT_EQ(c.severity, Severity::kWarn);
  EXPECT_TRUE(has(c.seen, "nvme-subsys0 (nqn.2024-01.io.rnvme:target1) has 2 rnvme paths: nvme0, nvme1")) << c.seen;
  EXPECT_TRUE(has(c.seen, "failover hold is off (failover_hold=N)")) << c.seen;
  EXPECT_EQ(c.why,
            "writes in flight at a path loss are retried at once; a late write on the lost path can overwrite "
            "newer data");
  EXPECT_TRUE(has(c.fix, "echo Y > /sys/module/rnvme/parameters/failover_hold")) << c.fix;
  EXPECT_TRUE(all(r, "multipath.cqt").empty()) << "with the hold off the CQT changes nothing";
  EXPECT_EQ(r.exit_status(), 1) << problems(r);
  expect_actionable(r);
}

TEST(DoctorMultipath, HoldOnWithNeitherCqtNorCcrWarns) {
  const auto r = run_doctor_checks(with_paths(true, {0, 0}, {0, 0}));
  const DoctorCheck& h = one(r, "multipath.failover_hold", "nvme-subsys0");
  EXPECT_EQ(h.severity, Severity::kOk);
  EXPECT_TRUE(has(h.seen, "failover hold on: nvme0 15000 ms, nvme1 15000 ms")) << h.seen;
  const DoctorCheck& c = one(r, "multipath.cqt", "nvme-subsys0");
  EXPECT_EQ(c.severity, Severity::kWarn);
  EXPECT_TRUE(has(c.seen, "nvme0, nvme1 report neither a Command Quiesce Time (cqt_ms 0) nor Cross-Controller "
                          "Reset (ccr_offered 0): the failover hold ends after 2-3 x KATO alone"))
      << c.seen;
  EXPECT_TRUE(has(c.why, "may still be executing a write")) << c.why;
  EXPECT_TRUE(has(c.fix, "reports CQT (NVMe 2.1, TP4129) or offers Cross-Controller Reset (TP8028)")) << c.fix;
  EXPECT_EQ(r.exit_status(), 1) << problems(r);
  expect_actionable(r);
  // an rnvme.ko from before ccr_offered: no CQT and nothing known of CCR is the same warning
  EXPECT_EQ(one(run_doctor_checks(with_paths(true, {0, 0})), "multipath.cqt", "nvme-subsys0").severity,
            Severity::kWarn);
}

TEST(DoctorMultipath, CcrWithoutCqtIsOk) {
  const auto r = run_doctor_checks(with_paths(true, {0, 0}, {1, 1}));
  const DoctorCheck& c = one(r, "multipath.cqt", "nvme-subsys0");
  EXPECT_EQ(c.severity, Severity::kOk) << c.seen;
  EXPECT_EQ(c.seen, "nvme0, nvme1 offer Cross-Controller Reset (ccr_resets counts those that ended a hold)");
  EXPECT_EQ(r.exit_status(), 0) << problems(r);
  // one path with neither is enough to warn, and it is the one named
  const auto m = run_doctor_checks(with_paths(true, {0, 0}, {1, 0}));
  const DoctorCheck& w = one(m, "multipath.cqt", "nvme-subsys0");
  EXPECT_EQ(w.severity, Severity::kWarn);
  EXPECT_TRUE(has(w.seen, "nvme1 reports neither")) << w.seen;
  EXPECT_TRUE(has(w.seen, "nvme0 offers Cross-Controller Reset")) << w.seen;
}

TEST(DoctorMultipath, ReportedCqtIsPartOfTheHold) {
  auto r = run_doctor_checks(with_paths(true, {250, 250}));
  const DoctorCheck& c = one(r, "multipath.cqt", "nvme-subsys0");
  EXPECT_EQ(c.severity, Severity::kOk);
  EXPECT_EQ(c.seen, "CQT nvme0 250 ms, nvme1 250 ms, part of the hold");
  EXPECT_EQ(r.exit_status(), 0) << problems(r);
  // one path without either: named alone, beside the one that reports it
  r = run_doctor_checks(with_paths(true, {0, 250}, {0, 0}));
  const DoctorCheck& m = one(r, "multipath.cqt", "nvme-subsys0");
  EXPECT_EQ(m.severity, Severity::kWarn);
  EXPECT_TRUE(has(m.seen, "nvme0 reports neither")) << m.seen;
  EXPECT_TRUE(has(m.seen, "; CQT nvme1 250 ms, part of the hold")) << m.seen;
}

TEST(DoctorMultipath, ASinglePathHasNoMultipathChecks) {
  for (std::optional<bool> hold : {std::optional<bool>(false), std::optional<bool>(true), std::optional<bool>()}) {
    const auto r = run_doctor_checks(with_paths(hold, {0}));
    EXPECT_TRUE(all(r, "multipath.failover_hold").empty());
    EXPECT_TRUE(all(r, "multipath.cqt").empty());
    EXPECT_EQ(r.exit_status(), 0) << problems(r);
  }
}

TEST(DoctorMultipath, AnRnvmeWithoutTheHoldWarns) {
  const auto r = run_doctor_checks(with_paths(std::nullopt, {std::nullopt, std::nullopt, std::nullopt}));
  const DoctorCheck& c = one(r, "multipath.failover_hold", "nvme-subsys0");
  EXPECT_EQ(c.severity, Severity::kWarn);
  EXPECT_TRUE(has(c.seen, "has 3 rnvme paths: nvme0, nvme1, nvme2; the loaded rnvme.ko has no failover hold"))
      << c.seen;
  EXPECT_TRUE(has(c.fix, "install an rnvme.ko with the failover hold")) << c.fix;
  EXPECT_TRUE(all(r, "multipath.cqt").empty());
  expect_actionable(r);
}

TEST(DoctorMultipath, EachMultipathSubsystemIsCheckedOnItsOwn) {
  auto s = with_paths(false, {0, 0});
  s.subsystems.push_back({"nvme-subsys2", "nqn.2024-01.io.rnvme:other", {{"nvme2", 0, 0, 0}}});
  s.subsystems.push_back({"nvme-subsys3", "nqn.2024-01.io.rnvme:third", {{"nvme3", 0, 0, 0}, {"nvme4", 0, 0, 0}}});
  const auto r = run_doctor_checks(s);
  ASSERT_EQ(all(r, "multipath.failover_hold").size(), 2u);
  EXPECT_EQ(one(r, "multipath.failover_hold", "nvme-subsys3").severity, Severity::kWarn);
  EXPECT_TRUE(has(one(r, "multipath.failover_hold", "nvme-subsys3").seen, "nvme3, nvme4"));
}

}  // namespace
}  // namespace rnvme
