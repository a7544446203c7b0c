#include "core/doctor.h"

#include <gtest/gtest.h>

#include "core/doctor/test_support.h"

namespace rnvme {
namespace {

using namespace doctor_test;

TEST(DoctorRdma, NoDevicesFailsWithASoftRoceFixForTheRoutesNetdev) {
  auto s = softroce();
  s.devices.clear();
  DoctorReport r = run_doctor_checks(s);
  const auto& c = one(r, "rdma.devices");
  EXPECT_EQ(c.severity, Severity::kFail);
  EXPECT_TRUE(has(c.fix, "rnvme rdma link add rxe0 type rxe netdev veth0")) << c.fix;
  EXPECT_EQ(r.exit_status(), 2);
  expect_actionable(r);
}

TEST(DoctorRdma, UnreadableInventoryFails) {
  auto s = softroce();
  s.devices.clear();
  s.devices_known = false;
  s.devices_error = "connect to RDMA netlink: Protocol not supported";
  DoctorReport r = run_doctor_checks(s);
  EXPECT_EQ(one(r, "rdma.devices").severity, Severity::kFail);
  EXPECT_TRUE(has(one(r, "rdma.devices").seen, "Protocol not supported"));
  EXPECT_TRUE(has(one(r, "rdma.devices").fix, "modprobe"));
}

TEST(DoctorRdma, PortDownOnADownNetdevSaysBringItUp) {
  auto s = softroce();
  s.devices[0].ports[0].state = "DOWN";
  s.devices[0].ports[0].phys_state = "DISABLED";
  s.netdevs["veth0"].operstate = "down";
  DoctorReport r = run_doctor_checks(s);
  const auto& c = one(r, "rdma.port", "rxe0/1");
  EXPECT_EQ(c.severity, Severity::kFail);
  EXPECT_EQ(c.fix, "ip link set dev veth0 up");
  EXPECT_TRUE(has(c.seen, "state DOWN, physical state DISABLED"));
}

TEST(DoctorRdma, NetdevMtuBelowTheRdmaMtuWarns) {
  // What Soft-RoCE does after 'ip link set veth0 mtu 1000': it follows, down to a 512 MTU.
  auto s = softroce();
  s.devices[0].ports[0].netdev_mtu = 1000;
  s.devices[0].ports[0].active_mtu = 512;
  DoctorReport r = run_doctor_checks(s);
  const auto& c = one(r, "rdma.mtu", "rxe0/1");
  EXPECT_EQ(c.severity, Severity::kWarn);
  EXPECT_TRUE(has(c.seen, "MTU 1000 is below the RDMA MTU of 1024: it limits RoCE to 512")) << c.seen;
  EXPECT_EQ(c.fix, "ip link set dev veth0 mtu 1500");
  EXPECT_EQ(r.exit_status(), 1) << problems(r);
}

TEST(DoctorRdma, ActiveMtuThatDoesNotFitTheNetdevFails) {
  // A NIC whose RoCE MTU does not follow the netdev: 1024 + 60 header bytes > 1000.
  auto s = softroce();
  s.devices[0].ports[0].netdev_mtu = 1000;
  DoctorReport r = run_doctor_checks(s);
  const auto& c = one(r, "rdma.mtu", "rxe0/1");
  EXPECT_EQ(c.severity, Severity::kFail);
  EXPECT_TRUE(has(c.seen, "needs 1084 bytes"));
  EXPECT_EQ(c.fix, "ip link set dev veth0 mtu 1500");
  // 4096 needs the 4200 NVIDIA documents.
  s.devices[0].ports[0].active_mtu = 4096;
  s.devices[0].ports[0].netdev_mtu = 1500;
  EXPECT_EQ(one(run_doctor_checks(s), "rdma.mtu", "rxe0/1").fix, "ip link set dev veth0 mtu 4200");
}

TEST(DoctorRdma, ActiveMtuBelowWhatTheNetdevAllowsWarns) {
  auto s = softroce();
  s.devices[0].ports[0].netdev_mtu = 9000;
  const DoctorCheck c = one(run_doctor_checks(s), "rdma.mtu", "rxe0/1");
  EXPECT_EQ(c.severity, Severity::kWarn);
  EXPECT_TRUE(has(c.seen, "active RDMA MTU 1024 while netdev veth0 MTU 9000 allows 4096")) << c.seen;
}

TEST(DoctorRdma, UnknownActiveMtuIsJudgedByTheNetdevAlone) {
  auto s = softroce();
  s.devices[0].ports[0].active_mtu = 0;
  const DoctorCheck c = one(run_doctor_checks(s), "rdma.mtu", "rxe0/1");
  EXPECT_EQ(c.severity, Severity::kOk);
  EXPECT_TRUE(has(c.seen, "allows RoCE MTU 1024 (active MTU unknown"));
}

TEST(DoctorRdma, InfiniBandPortsHaveNoMtuOrLosslessCheck) {
  auto s = softroce();
  s.devices[0].ports[0].link_layer = "InfiniBand";
  s.tos = 96;
  auto r = run_doctor_checks(s);
  EXPECT_TRUE(all(r, "rdma.mtu").empty());
  EXPECT_TRUE(all(r, "lossless.dcb").empty());
  EXPECT_TRUE(all(r, "lossless.tos").empty());
  EXPECT_EQ(one(r, "target.source_gid").severity, Severity::kOk);
}

}  // namespace
}  // namespace rnvme
