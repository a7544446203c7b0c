#include "core/doctor.h"

#include <gtest/gtest.h>

#include "core/doctor/test_support.h"

namespace rnvme {
namespace {

using namespace doctor_test;

TEST(DoctorLossless, TosWithoutDcbWarnsAndSaysWhatItCannotKnow) {
  auto s = softroce();
  s.tos = 96;
  DoctorReport r = run_doctor_checks(s);
  const auto& c = one(r, "lossless.tos", "veth0");
  EXPECT_EQ(c.severity, Severity::kWarn);
  EXPECT_TRUE(has(c.seen, "tos=96 (DSCP 24): veth0 has no DCB"));
  EXPECT_TRUE(has(c.seen, "not visible from this host"));
  EXPECT_TRUE(has(c.fix, "dscp-prio 24:3"));
  EXPECT_EQ(r.exit_status(), 1) << problems(r);
}

TEST(DoctorLossless, DcbAbsentOnHardwareWarns) {
  auto s = softroce();
  s.software_device["rxe0"] = false;
  auto r = run_doctor_checks(s);
  EXPECT_EQ(one(r, "lossless.dcb", "veth0").severity, Severity::kWarn);
  EXPECT_EQ(one(r, "lossless.tos", "veth0").severity, Severity::kOk) << "no tos asked for: nothing to flag twice";
}

TEST(DoctorLossless, UnreadableDcbWarns) {
  auto s = softroce();
  s.netdevs["veth0"].dcb.support = DcbState::kUnknown;
  s.netdevs["veth0"].dcb.error = "RTM_GETDCB veth0: Operation not permitted";
  const DoctorCheck c = one(run_doctor_checks(s), "lossless.dcb", "veth0");
  EXPECT_EQ(c.severity, Severity::kWarn);
  EXPECT_TRUE(has(c.seen, "Operation not permitted"));
}

DcbState pfc3() {
  DcbState d;
  d.support = DcbState::kPresent;
  d.has_pfc = true;
  d.pfc_cap = 8;
  d.pfc_en = 1u << 3;
  d.apps = {{5, 3, 26}};
  return d;
}

TEST(DoctorLossless, TosOnAPriorityWithoutPfcFailsAndNamesAGoodTos) {
  auto s = softroce();
  s.netdevs["veth0"].dcb = pfc3();
  s.tos = 0;
  s.netdevs["veth0"].dcb.apps.push_back({5, 0, 0});
  auto r = run_doctor_checks(s);
  const auto& c = one(r, "lossless.tos", "veth0");
  EXPECT_EQ(c.severity, Severity::kFail);
  EXPECT_TRUE(has(c.seen, "DSCP 0 -> priority 0")) << c.seen;
  EXPECT_TRUE(has(c.fix, "connect with tos=104 (DSCP 26 -> priority 3)")) << c.fix;
  s.tos = 104;
  EXPECT_EQ(one(run_doctor_checks(s), "lossless.tos", "veth0").severity, Severity::kOk);
}

TEST(DoctorLossless, RdmaCmDefaultRoceTosIsTheDefault) {
  auto s = softroce();
  s.netdevs["veth0"].dcb = pfc3();
  s.default_roce_tos["rxe0/1"] = 104;
  const DoctorCheck c = one(run_doctor_checks(s), "lossless.tos", "veth0");
  EXPECT_EQ(c.severity, Severity::kOk);
  EXPECT_TRUE(has(c.seen, "rxe0/1's rdma_cm default_roce_tos (104)")) << c.seen;
}

TEST(DoctorLossless, NoPfcAnywhereWarns) {
  auto s = softroce();
  s.netdevs["veth0"].dcb = pfc3();
  s.netdevs["veth0"].dcb.pfc_en = 0;
  auto r = run_doctor_checks(s);
  EXPECT_EQ(one(r, "lossless.pfc", "veth0").severity, Severity::kWarn);
  EXPECT_EQ(one(r, "lossless.tos", "veth0").severity, Severity::kWarn) << "not a fail: nothing is lossless";
}

TEST(DoctorLossless, PfcClassWithoutEtsBandwidthWarns) {
  auto s = softroce();
  auto& d = s.netdevs["veth0"].dcb;
  d = pfc3();
  d.has_ets = true;
  d.prio_tc = {0, 0, 0, 1, 0, 0, 0, 0};
  d.tc_tsa = {2, 2, 0, 0, 0, 0, 0, 0};
  d.tc_bw = {100, 0, 0, 0, 0, 0, 0, 0};
  DoctorCheck c = one(run_doctor_checks(s), "lossless.ets", "veth0");
  EXPECT_EQ(c.severity, Severity::kWarn);
  EXPECT_TRUE(has(c.seen, "priority 3 (TC 1)"));
  d.tc_bw = {50, 50, 0, 0, 0, 0, 0, 0};
  c = one(run_doctor_checks(s), "lossless.ets", "veth0");
  EXPECT_EQ(c.severity, Severity::kOk);
  EXPECT_TRUE(has(c.seen, "TC0 50%, TC1 50%"));
}

TEST(DoctorLossless, EcnOffOnTheStoragePriorityWarns) {
  auto s = softroce();
  auto& n = s.netdevs["veth0"];
  n.dcb = pfc3();
  s.tos = 104;
  n.ecn_np = {{3, true}};
  n.ecn_rp = {{3, false}};
  DoctorCheck c = one(run_doctor_checks(s), "lossless.ecn", "veth0");
  EXPECT_EQ(c.severity, Severity::kWarn);
  EXPECT_TRUE(has(c.fix, "/sys/class/net/veth0/ecn/roce_rp/enable/3"));
  n.ecn_rp[3] = true;
  EXPECT_EQ(one(run_doctor_checks(s), "lossless.ecn", "veth0").severity, Severity::kOk);
}

}  // namespace
}  // namespace rnvme
