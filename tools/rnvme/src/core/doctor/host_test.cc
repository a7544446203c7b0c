#include "core/doctor.h"

#include <gtest/gtest.h>

#include "core/doctor/test_support.h"

namespace rnvme {
namespace {

using namespace doctor_test;

TEST(DoctorHost, MissingHostidWarns) {
  auto s = softroce();
  s.host.hostid.reset();
  auto r = run_doctor_checks(s);
  const auto& c = one(r, "host.hostid");
  EXPECT_EQ(c.severity, Severity::kWarn);
  EXPECT_EQ(c.fix, "echo 6f1f7b3a-1b1e-4c5e-9d1a-0c0ffee0d00d > /etc/nvme/hostid");
  EXPECT_EQ(r.exit_status(), 1) << problems(r);
}

TEST(DoctorHost, MalformedHostidFails) {
  auto s = softroce();
  s.host.hostid = "not-a-uuid\n";
  auto r = run_doctor_checks(s);
  EXPECT_EQ(one(r, "host.hostid").severity, Severity::kFail);
  EXPECT_TRUE(has(one(r, "host.hostid").seen, "'not-a-uuid' is not a UUID"));
  EXPECT_EQ(one(r, "host.hostnqn").severity, Severity::kOk);
  EXPECT_TRUE(all(r, "host.in_use").empty()) << "no pair to compare";
}

TEST(DoctorHost, MissingHostnqnWarns) {
  auto s = softroce();
  s.host.hostnqn.reset();
  const DoctorCheck c = one(run_doctor_checks(s), "host.hostnqn");
  EXPECT_EQ(c.severity, Severity::kWarn);
}

// connect takes the generated host NQN for a blank file, as nvme-cli: a warning, not a failure
TEST(DoctorHost, BlankHostnqnWarns) {
  auto s = softroce();
  s.host.hostnqn = "\n";
  const DoctorCheck c = one(run_doctor_checks(s), "host.hostnqn");
  EXPECT_EQ(c.severity, Severity::kWarn);
  s.host.hostid = "\n";  // a blank host ID file is still a failure
  EXPECT_EQ(one(run_doctor_checks(s), "host.hostid").severity, Severity::kFail);
}

TEST(DoctorHost, IdentityUsedWithAnotherIdFails) {
  auto s = softroce();
  s.host_in_use.push_back({"nvme0", "nqn.2014-08.org.nvmexpress:uuid:6f1f7b3a-1b1e-4c5e-9d1a-0c0ffee0d00d",
                           "11111111-2222-4333-8444-555555555555"});
  const DoctorCheck c = one(run_doctor_checks(s), "host.in_use");
  EXPECT_EQ(c.severity, Severity::kFail);
  EXPECT_TRUE(has(c.seen, "nvme0"));
}

TEST(DoctorHost, UnrelatedHostidIsANoteNotAWarning) {
  auto s = softroce();
  s.host.hostid = "11111111-2222-4333-8444-555555555555";
  auto r = run_doctor_checks(s);
  EXPECT_EQ(one(r, "host.consistency").severity, Severity::kOk);
  EXPECT_EQ(r.exit_status(), 0) << problems(r);
}

}  // namespace
}  // namespace rnvme
