#include "core/doctor.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "core/doctor/test_support.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace doctor_test;

TEST(Doctor, HealthySoftRoceIsAllOk) {
  DoctorReport r = run_doctor_checks(softroce());
  EXPECT_EQ(r.exit_status(), 0) << problems(r);
  std::set<std::string> groups;
  for (const auto& c : r.checks) groups.insert(c.id.substr(0, c.id.find('.')));
  EXPECT_EQ(groups, (std::set<std::string>{"rdma", "target", "lossless", "host", "module", "queues"}));
  EXPECT_TRUE(has(one(r, "target.source_gid").seen, "GID index 1 of rxe0/1 (RoCE v2, IPv4-mapped")) << one(r, "target.source_gid").seen;
  EXPECT_TRUE(has(one(r, "target.route").seen, "192.0.2.2 on link dev veth0 src 192.0.2.1 (table 100)"));
  EXPECT_TRUE(has(one(r, "rdma.soft_roce").seen, "rxe0"));
  EXPECT_TRUE(has(one(r, "lossless.dcb", "veth0").seen, "DCB absent"));
  for (const auto& c : r.checks) {
    EXPECT_TRUE(c.why.empty() && c.fix.empty()) << c.id << ": an ok check carries no why/fix";
    EXPECT_FALSE(c.seen.empty()) << c.id;
  }
}

TEST(Doctor, ExitStatusIsTheWorstSeverity) {
  DoctorReport r;
  EXPECT_EQ(r.exit_status(), 0);
  r.checks.push_back({"a.b", "", Severity::kWarn, "x", "y", "z"});
  EXPECT_EQ(r.exit_status(), 1);
  r.checks.push_back({"a.c", "", Severity::kOk, "x", "", ""});
  EXPECT_EQ(r.exit_status(), 1);
  r.checks.push_back({"a.d", "", Severity::kFail, "x", "y", "z"});
  EXPECT_EQ(r.exit_status(), 2);
}

TEST(DoctorFixtures, ConnectX5LosslessDscpIsAllOk) {
  auto s = fixture("mlx5-connectx5-lossless.json");
  ASSERT_TRUE(has(s.source, "NVIDIA"));
  auto r = run_doctor_checks(s);
  EXPECT_EQ(r.exit_status(), 0) << problems(r);
  EXPECT_TRUE(has(one(r, "lossless.tos", "ens1f0np0").seen, "tos=106: DSCP 26 -> priority 3")) << one(r, "lossless.tos").seen;
  EXPECT_TRUE(has(one(r, "lossless.ecn", "ens1f0np0").seen, "on for priority 3"));
  EXPECT_TRUE(has(one(r, "target.source_gid").seen, "GID index 3 of mlx5_0/1 (RoCE v2, IPv4-mapped"));
  EXPECT_TRUE(has(one(r, "rdma.mtu", "mlx5_0/1").seen, "active RDMA MTU 4096 fits netdev ens1f0np0 MTU 9000"));
  EXPECT_TRUE(has(one(r, "rdma.soft_roce").seen, "hardware RDMA only"));
  EXPECT_TRUE(has(one(r, "queues.budget", "mlx5_0").seen, "mlx5_0 allows 262144 QPs"));
}

TEST(DoctorFixtures, ConnectX5DefaultTosLandsOnALossyPriority) {
  auto r = run_doctor_checks(fixture("mlx5-connectx5-default-tos.json"));
  const auto& c = one(r, "lossless.tos", "ens1f0np0");
  EXPECT_EQ(c.severity, Severity::kFail);
  EXPECT_TRUE(has(c.seen, "the RDMA CM default (0): DSCP 0 -> priority 0")) << c.seen;
  EXPECT_TRUE(has(c.fix, "connect with tos=96 (DSCP 24 -> priority 3)")) << c.fix;
  EXPECT_EQ(one(r, "lossless.ecn", "ens1f0np0").severity, Severity::kWarn);
  EXPECT_EQ(r.exit_status(), 2);
  expect_actionable(r);
}

TEST(DoctorFixtures, ConnectX5PcpTrustOnAVlan) {
  auto s = fixture("mlx5-connectx5-vlan-pcp.json");
  ASSERT_TRUE(has(s.source, "NVIDIA"));
  auto r = run_doctor_checks(s);
  EXPECT_EQ(r.exit_status(), 0) << problems(r);
  EXPECT_TRUE(has(one(r, "lossless.dcb", "ens1f0np0.100").seen, "DCB present (VLAN 100 of ens1f0np0)"));
  EXPECT_TRUE(has(one(r, "lossless.tos", "ens1f0np0.100").seen, "PCP 3, which has PFC")) << one(r, "lossless.tos").seen;
  EXPECT_TRUE(has(one(r, "target.source_gid").seen, "GID index 5 of mlx5_0/1 (RoCE v2, IPv4-mapped, netdev ens1f0np0.100)"));
  EXPECT_TRUE(has(one(r, "target.rdma_netdev").seen, "ens1f0np0.100 carries mlx5_0/1"));
  // Without the egress map the frames carry PCP 0, which has no PFC.
  s.netdevs["ens1f0np0.100"].egress_qos.clear();
  r = run_doctor_checks(s);
  const DoctorCheck c = one(r, "lossless.tos", "ens1f0np0.100");
  EXPECT_EQ(c.severity, Severity::kFail);
  EXPECT_EQ(c.fix, "give the connection's skb priority the PCP of priority 3: ip link set dev ens1f0np0.100 type "
                   "vlan egress-qos-map 0:3");
  // The same host untagged: nothing but DSCP can lift the traffic off priority 0.
  s.target->route.oif = "ens1f0np0";
  s.target->route.src = "192.168.100.11";
  s.devices[0].ports[0].gids.push_back({3, *gid_for_address("192.168.100.11"), "RoCE v2", "ens1f0np0"});
  const DoctorCheck u = one(run_doctor_checks(s), "lossless.tos", "ens1f0np0");
  EXPECT_EQ(u.severity, Severity::kFail);
  EXPECT_TRUE(has(u.fix, "send through a VLAN with egress-qos-map 0:3, or classify by DSCP: dcb app add dev "
                         "ens1f0np0 dscp-prio 0:3"))
      << u.fix;
}

TEST(DoctorFixtures, E810PartialDscpMapSecondPortDownAndAKernelWithoutModule) {
  auto s = fixture("e810-irdma-dscp-partial.json");
  ASSERT_TRUE(has(s.source, "Intel"));
  auto r = run_doctor_checks(s);
  EXPECT_EQ(one(r, "lossless.tos", "ens801f0").severity, Severity::kWarn) << "DSCP 0 has no APP entry";
  EXPECT_EQ(one(r, "rdma.port", "rdmap175s0f1/1").severity, Severity::kFail);
  EXPECT_EQ(one(r, "rdma.port", "rdmap175s0f1/1").fix, "ip link set dev ens801f1 up");
  EXPECT_EQ(one(r, "rdma.port", "rdmap175s0f0/1").severity, Severity::kOk);
  EXPECT_EQ(one(r, "module.dkms", "6.1.0-28-amd64").severity, Severity::kWarn);
  EXPECT_EQ(one(r, "module.dkms", "6.1.0-27-amd64").severity, Severity::kOk);
  EXPECT_TRUE(has(one(r, "lossless.ets", "ens801f0").seen, "TC0 50%, TC1 50%"));
  EXPECT_TRUE(has(one(r, "lossless.ecn", "ens801f0").seen, "not exposed"));
  EXPECT_TRUE(has(one(r, "queues.budget", "rdmap175s0f0").seen, "limits unknown"));
  EXPECT_TRUE(all(r, "lossless.dcb").size() == 1) << "only the route's netdev is checked";
  EXPECT_EQ(r.exit_status(), 2);
  expect_actionable(r);
}

TEST(DoctorFixtures, BnxtReLosslessIsAllOk) {
  auto s = fixture("bnxt-re-lossless.json");
  ASSERT_TRUE(has(s.source, "Broadcom"));
  auto r = run_doctor_checks(s);
  EXPECT_EQ(r.exit_status(), 0) << problems(r);
  EXPECT_TRUE(has(one(r, "lossless.tos").seen, "DSCP 26 -> priority 3"));
  EXPECT_TRUE(has(one(r, "lossless.pfc").seen, "PFC on priorities 3 (capable of 3 classes)"));
  // The same host with the CNP DSCP as the connection's ToS: priority 7 has no PFC.
  s.tos = 48 << 2;
  EXPECT_EQ(one(run_doctor_checks(s), "lossless.tos").severity, Severity::kFail);
}

// Recorded by VM suite 06-doctor on its healthy Soft-RoCE setup; the faults it then makes,
// applied to the recording.
TEST(DoctorFixtures, RecordedSoftRoceVmIsHealthyAndEachFaultIsNamed) {
  const auto base = fixture("softroce-vm.json");
  ASSERT_TRUE(has(base.source, "Recorded in the VM"));
  auto r = run_doctor_checks(base);
  EXPECT_EQ(r.exit_status(), 0) << problems(r);
  EXPECT_TRUE(has(one(r, "target.route").seen, "dev veth0 src 192.0.2.1 (table 100)"));
  EXPECT_TRUE(has(one(r, "queues.budget", "rxe0").seen, "rxe0 allows")) << one(r, "queues.budget", "rxe0").seen;

  auto s = base;  // veth0 at MTU 1000: rxe0 follows to 512
  s.devices[0].ports[0].netdev_mtu = 1000;
  s.devices[0].ports[0].active_mtu = 512;
  EXPECT_EQ(one(run_doctor_checks(s), "rdma.mtu", "rxe0/1").severity, Severity::kWarn);
  s = base;  // rdma link delete rxe0
  s.devices.erase(s.devices.begin());
  EXPECT_EQ(one(run_doctor_checks(s), "target.rdma_netdev").severity, Severity::kFail);
  s = base;
  s.modules.nvme_rdma_loaded = true;
  EXPECT_EQ(one(run_doctor_checks(s), "module.conflict").severity, Severity::kFail);
  s = base;
  s.host.hostid.reset();
  EXPECT_EQ(run_doctor_checks(s).exit_status(), 1);
  s.host.hostid = "12345";
  EXPECT_EQ(one(run_doctor_checks(s), "host.hostid").severity, Severity::kFail);
  s = base;
  s.tos = 96;
  EXPECT_EQ(one(run_doctor_checks(s), "lossless.tos", "veth0").severity, Severity::kWarn);
}

// Every id the checks emit has its entry in Documentation/doctor-checks.rst.
TEST(DoctorDocs, EveryCheckIdIsDocumented) {
  std::ifstream in(std::string(RNVME_TESTDATA_DIR) + "/../../../Documentation/doctor-checks.rst");
  ASSERT_TRUE(in.good());
  std::stringstream doc;
  doc << in.rdbuf();
  std::set<std::string> ids;
  auto collect = [&](const DoctorSnapshot& s) {
    for (const auto& c : run_doctor_checks(s).checks) ids.insert(c.id);
  };
  for (const char* f : {"softroce-vm.json", "mlx5-connectx5-lossless.json", "mlx5-connectx5-default-tos.json",
                        "mlx5-connectx5-vlan-pcp.json", "e810-irdma-dscp-partial.json", "bnxt-re-lossless.json"})
    collect(fixture(f));
  auto s = softroce();
  s.host.hostid = "11111111-2222-4333-8444-555555555555";  // host.consistency
  s.modules.rnvme_failover_hold = true;                       // multipath.*
  s.subsystems.push_back({"nvme-subsys0", "nqn.2024-01.io.rnvme:target1", {{"nvme0", 0, 15000, 0}, {"nvme1", 0, 15000, 0}}});
  collect(s);
  EXPECT_GE(ids.size(), 25u);
  for (const auto& id : ids) EXPECT_TRUE(has(doc.str(), "\n" + id + "\n   **What**")) << id << " is not documented";
}

}  // namespace
}  // namespace rnvme
