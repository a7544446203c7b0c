#include "core/doctor.h"

#include <gtest/gtest.h>

#include "core/doctor/test_support.h"

namespace rnvme {
namespace {

using namespace doctor_test;

TEST(DoctorModules, NvmeRdmaBesideRnvmeFails) {
  auto s = softroce();
  s.modules.nvme_rdma_loaded = true;
  auto r = run_doctor_checks(s);
  const auto& c = one(r, "module.conflict");
  EXPECT_EQ(c.severity, Severity::kFail);
  EXPECT_TRUE(has(c.seen, "rnvme registered \"rdma\" first"));
  EXPECT_TRUE(has(c.fix, "modprobe -r nvme_rdma"));
  EXPECT_EQ(one(r, "module.transport").severity, Severity::kOk);
}

TEST(DoctorModules, InTreeServingRdmaWarns) {
  auto s = softroce();
  s.modules.rnvme_loaded = false;
  s.modules.nvme_rdma_loaded = true;
  auto r = run_doctor_checks(s);
  EXPECT_EQ(one(r, "module.transport").severity, Severity::kWarn);
  EXPECT_EQ(one(r, "module.conflict").severity, Severity::kOk);
  // rnvme under another transport name leaves "rdma" to nvme_rdma, without a conflict of names.
  s.modules.rnvme_loaded = true;
  s.modules.rnvme_transport_name = "rnvme";
  r = run_doctor_checks(s);
  EXPECT_TRUE(has(one(r, "module.transport").seen, "rnvme is loaded as \"rnvme\""));
}

TEST(DoctorModules, NothingLoaded) {
  auto s = softroce();
  s.modules.rnvme_loaded = false;
  // The test harness's block file and no rnvme: connects find no transport.
  EXPECT_EQ(one(run_doctor_checks(s), "module.transport").severity, Severity::kFail);
  EXPECT_TRUE(has(one(run_doctor_checks(s), "module.transport").fix, "rnvme-dkms")) << "not installed: modprobe cannot";
  s.modules.kernels[0].rnvme_module = "/lib/modules/6.1.0-56-amd64/updates/dkms/rnvme.ko";
  EXPECT_EQ(one(run_doctor_checks(s), "module.transport").fix, "modprobe rnvme");
  s.modules.block_file.clear();
  EXPECT_EQ(one(run_doctor_checks(s), "module.transport").severity, Severity::kWarn);
  s.modules.redirect_file = "/etc/modprobe.d/rnvme.conf";
  EXPECT_EQ(one(run_doctor_checks(s), "module.transport").severity, Severity::kOk);
}

TEST(DoctorModules, MissingRedirectWarnsWhenRnvmeIsThere) {
  auto s = softroce();
  s.modules.block_file.clear();
  const DoctorCheck c = one(run_doctor_checks(s), "module.redirect");
  EXPECT_EQ(c.severity, Severity::kWarn);
  EXPECT_TRUE(has(c.fix, "/etc/modprobe.d/rnvme.conf"));
}

TEST(DoctorModules, DkmsWithoutAModuleForTheRunningKernel) {
  auto s = softroce();
  s.modules.dkms_registered = true;
  s.modules.kernels = {{"6.1.0-56-amd64", true, true, "", false}, {"6.12.1-amd64", false, false, "", false}};
  auto r = run_doctor_checks(s);
  EXPECT_EQ(one(r, "module.dkms", "6.1.0-56-amd64").severity, Severity::kWarn) << "rnvme is loaded now";
  const auto& other = one(r, "module.dkms", "6.12.1-amd64");
  EXPECT_EQ(other.severity, Severity::kWarn);
  EXPECT_EQ(other.fix, "apt-get install linux-headers-6.12.1-amd64 && dkms autoinstall -k 6.12.1-amd64");
  s.modules.rnvme_loaded = false;
  r = run_doctor_checks(s);
  EXPECT_EQ(one(r, "module.dkms", "6.1.0-56-amd64").severity, Severity::kFail);
  EXPECT_EQ(one(r, "module.dkms", "6.1.0-56-amd64").fix, "dkms autoinstall -k 6.1.0-56-amd64");
}

}  // namespace
}  // namespace rnvme
