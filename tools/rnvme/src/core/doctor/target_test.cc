#include "core/doctor.h"

#include <gtest/gtest.h>

#include "core/doctor/test_support.h"

namespace rnvme {
namespace {

using namespace doctor_test;

TEST(DoctorTarget, NoRouteFailsAndStopsThere) {
  auto s = softroce();
  s.target->traddr = "198.51.100.7";
  s.target->route = RouteFacts{};
  s.target->route.err = 101;
  s.target->route.error = "Network is unreachable";
  DoctorReport r = run_doctor_checks(s);
  const auto& c = one(r, "target.route");
  EXPECT_EQ(c.severity, Severity::kFail);
  EXPECT_TRUE(has(c.seen, "no route to 198.51.100.7: Network is unreachable"));
  EXPECT_TRUE(has(c.fix, "ip route add 198.51.100.7 dev veth0")) << c.fix;
  EXPECT_TRUE(all(r, "target.source_gid").empty());
  EXPECT_EQ(r.exit_status(), 2);
}

// A local target works (make demo's setup): a warning with why, and doctor exits 0 for it.
TEST(DoctorTarget, ARouteThroughLoWarns) {
  auto s = softroce();
  s.target->route.oif = "lo";
  s.target->route.local = true;
  DoctorReport r = run_doctor_checks(s);
  EXPECT_EQ(one(r, "target.route").severity, Severity::kWarn);
  EXPECT_NE(r.exit_status(), 2);
  EXPECT_TRUE(has(one(r, "target.route").seen, "routed through lo"));
}

TEST(DoctorTarget, FailedNeighbourIsUnreachable) {
  auto s = softroce();
  s.target->route.neighbour = "FAILED";
  auto r = run_doctor_checks(s);
  EXPECT_EQ(one(r, "target.reachable").severity, Severity::kFail);
  EXPECT_TRUE(has(one(r, "target.reachable").seen, "next hop 192.0.2.2 on veth0: neighbour state FAILED"));
  s.target->route.neighbour = "";
  s.target->route.gateway = "192.0.2.254";
  r = run_doctor_checks(s);
  EXPECT_EQ(one(r, "target.reachable").severity, Severity::kOk);
  EXPECT_TRUE(has(one(r, "target.reachable").seen, "next hop 192.0.2.254 not resolved yet"));
}

TEST(DoctorTarget, RouteNetdevWithoutRdmaDeviceFails) {
  // 'rdma link delete rxe0': the route still leaves through veth0.
  auto s = softroce();
  s.devices.clear();
  s.software_device.clear();
  DoctorReport r = run_doctor_checks(s);
  const auto& c = one(r, "target.rdma_netdev");
  EXPECT_EQ(c.severity, Severity::kFail);
  EXPECT_TRUE(has(c.fix, "rnvme rdma link add rxe0 type rxe netdev veth0")) << c.fix;
  EXPECT_EQ(one(r, "target.source_gid").severity, Severity::kFail);
  EXPECT_TRUE(all(r, "lossless.dcb").empty()) << "no RoCE on veth0: its DCB does not matter";
  expect_actionable(r);
}

TEST(DoctorTarget, HardwareNetdevWithoutRdmaNamesTheDrivers) {
  auto s = softroce();
  s.devices.clear();
  s.netdevs["veth0"].software = false;
  EXPECT_TRUE(has(one(run_doctor_checks(s), "target.rdma_netdev").fix, "mlx5_ib, irdma, bnxt_re"));
}

TEST(DoctorTarget, OnlyARoceV1GidFailsUnderTheDefaultRoceMode) {
  auto s = softroce();
  s.devices[0].ports[0].gids[1].type = "IB/RoCE v1";
  DoctorCheck c = one(run_doctor_checks(s), "target.source_gid");
  EXPECT_EQ(c.severity, Severity::kFail);
  EXPECT_TRUE(has(c.seen, "has only a RoCE v1 GID (index 1 of rxe0/1) and the RDMA CM looks for a RoCE v2 one")) << c.seen;
  // With the CM set to RoCE v1 it connects, inside one L2 domain only.
  s.default_roce_mode["rxe0/1"] = "IB/RoCE v1";
  c = one(run_doctor_checks(s), "target.source_gid");
  EXPECT_EQ(c.severity, Severity::kWarn);
  EXPECT_TRUE(has(c.seen, "rdma_cm default_roce_mode IB/RoCE v1"));
  EXPECT_EQ(c.fix, "mkdir -p /sys/kernel/config/rdma_cm/rxe0 && echo \"RoCE v2\" > "
                   "/sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_mode");
}

TEST(DoctorTarget, TheCmPicksTheGidOfItsRoceMode) {
  auto s = softroce();
  // Both types for the address, as mlx5 lists them; the CM set to v1 takes the v1 entry.
  s.devices[0].ports[0].gids.push_back({2, *gid_for_address("192.0.2.1"), "IB/RoCE v1", "veth0"});
  DoctorCheck c = one(run_doctor_checks(s), "target.source_gid");
  EXPECT_EQ(c.severity, Severity::kOk);
  EXPECT_TRUE(has(c.seen, "GID index 1 of rxe0/1 (RoCE v2")) << c.seen;
  s.default_roce_mode["rxe0/1"] = "IB/RoCE v1";
  c = one(run_doctor_checks(s), "target.source_gid");
  EXPECT_EQ(c.severity, Severity::kWarn);
  EXPECT_TRUE(has(c.seen, "GID index 2 of rxe0/1 (RoCE v1")) << c.seen;
}

TEST(DoctorTarget, SourceAddressWithoutGidFails) {
  auto s = softroce();
  s.target->route.src = "192.0.2.9";
  const DoctorCheck c = one(run_doctor_checks(s), "target.source_gid");
  EXPECT_EQ(c.severity, Severity::kFail);
  EXPECT_TRUE(has(c.fix, "ip addr add 192.0.2.9/<len> dev veth0")) << c.fix;
}

TEST(DoctorTarget, Ipv6SourceGidIsNamedIpv6) {
  auto s = softroce();
  s.target->traddr = "2001:db8::2";
  s.target->route.src = "2001:db8::1";
  s.devices[0].ports[0].gids.push_back({2, *gid_for_address("2001:db8::1"), "RoCE v2", "veth0"});
  const DoctorCheck c = one(run_doctor_checks(s), "target.source_gid");
  EXPECT_EQ(c.severity, Severity::kOk);
  EXPECT_TRUE(has(c.seen, "GID index 2 of rxe0/1 (RoCE v2, IPv6")) << c.seen;
}

TEST(DoctorTarget, RouteMtuSmallerThanTheRdmaMtuWarns) {
  auto s = softroce();
  s.target->route.mtu = 1000;
  const DoctorCheck c = one(run_doctor_checks(s), "target.path_mtu");
  EXPECT_EQ(c.severity, Severity::kWarn);
  EXPECT_TRUE(has(c.seen, "route MTU 1000: RDMA MTU 1024 needs 1084"));
  s.target->route.mtu = 1400;
  EXPECT_EQ(one(run_doctor_checks(s), "target.path_mtu").severity, Severity::kOk);
}

TEST(DoctorTarget, NoTargetNoTargetChecks) {
  auto s = softroce();
  s.target.reset();
  auto r = run_doctor_checks(s);
  for (const auto& c : r.checks) EXPECT_NE(c.id.rfind("target.", 0), 0u) << c.id;
  // Without a target the RDMA netdevs' lossless settings are checked.
  EXPECT_EQ(one(r, "lossless.dcb", "veth0").severity, Severity::kOk);
}

}  // namespace
}  // namespace rnvme
