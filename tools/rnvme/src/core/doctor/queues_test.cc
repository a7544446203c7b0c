#include "core/doctor.h"

#include <gtest/gtest.h>

#include "core/doctor/test_support.h"

namespace rnvme {
namespace {

using namespace doctor_test;

TEST(DoctorQueues, DeviceShortOfQpsFails) {
  auto s = softroce();
  s.queues.online_cpus = 8;
  s.queues.limits["rxe0"] = {64, 128, 100000, 60, 60, 0};
  DoctorCheck c = one(run_doctor_checks(s), "queues.budget", "rxe0");
  EXPECT_EQ(c.severity, Severity::kFail);
  EXPECT_TRUE(has(c.why, "QPs (4 left)")) << c.why;
  EXPECT_TRUE(has(c.fix, "--nr-io-queues 3")) << c.fix;
  s.queues.limits["rxe0"] = {64, 128, 1000, 0, 0, 0};  // 8 * 128 + 32 MRs do not fit in 1000
  c = one(run_doctor_checks(s), "queues.budget", "rxe0");
  EXPECT_EQ(c.severity, Severity::kFail);
  EXPECT_TRUE(has(c.why, "MRs (1000 left)")) << c.why;
}

TEST(DoctorQueues, GrantedQueuesAndUnknownLimits) {
  auto s = softroce();
  s.queues.online_cpus = 16;
  s.queues.controllers.push_back({"nvme1", "192.0.2.2", "4421", 9, 127});  // another port: not this target
  s.queues.controllers.push_back({"nvme0", "192.0.2.2", "4420", 5, 127});
  DoctorCheck c = one(run_doctor_checks(s), "queues.budget", "rxe0");
  EXPECT_EQ(c.severity, Severity::kOk);
  EXPECT_TRUE(has(c.seen, "16 CPUs online: a default connect asks for 16 I/O queues (192.0.2.2 granted 4); it "
                          "takes 5 QPs, up to 5 CQs and 544 MRs"))
      << c.seen;
  EXPECT_TRUE(has(c.seen, "limits unknown"));
}

}  // namespace
}  // namespace rnvme
