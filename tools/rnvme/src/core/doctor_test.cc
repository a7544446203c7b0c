#include "core/doctor.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "core/printer.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

// ------------------------------------------------------------------ helpers

DoctorSnapshot fixture(const std::string& name) {
  std::ifstream in(std::string(RNVME_TESTDATA_DIR) + "/doctor/" + name);
  EXPECT_TRUE(in.good()) << name;
  auto j = nlohmann::json::parse(in);
  auto s = snapshot_from_json(j);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : DoctorSnapshot{};
}

std::vector<const DoctorCheck*> all(const DoctorReport& r, std::string_view id) {
  std::vector<const DoctorCheck*> out;
  for (const auto& c : r.checks)
    if (c.id == id) out.push_back(&c);
  return out;
}

// The one check `id` (about `subject` when given); fails the test when there is not exactly one.
const DoctorCheck& one(const DoctorReport& r, std::string_view id, std::string_view subject = {}) {
  static const DoctorCheck none{"<missing>", "", Severity::kFail, "", "", ""};
  std::vector<const DoctorCheck*> m;
  for (const auto* c : all(r, id))
    if (subject.empty() || c->subject == subject) m.push_back(c);
  EXPECT_EQ(m.size(), 1u) << id << " " << subject;
  return m.size() == 1 ? *m[0] : none;
}

std::string problems(const DoctorReport& r) {
  std::string s;
  for (const auto& c : r.checks)
    if (c.severity != Severity::kOk)
      s += std::string(severity_name(c.severity)) + " " + c.id + " " + c.subject + ": " + c.seen + "\n";
  return s;
}

bool has(const std::string& hay, std::string_view needle) { return hay.find(needle) != std::string::npos; }

// Soft-RoCE as the VM suite builds it: rxe0 on veth0 (192.0.2.1), target 192.0.2.2 on the link.
DoctorSnapshot softroce() {
  DoctorSnapshot s;
  RdmaDevice d;
  d.index = 0;
  d.name = "rxe0";
  RdmaPort p;
  p.index = 1;
  p.state = "ACTIVE";
  p.phys_state = "LINK_UP";
  p.link_layer = "Ethernet";
  p.active_mtu = 1024;
  p.netdev = "veth0";
  p.netdev_mtu = 1500;
  p.gids.push_back({0, "fe80:0000:0000:0000:5c6e:4bff:fe2d:1a01", "RoCE v2", "veth0"});
  p.gids.push_back({1, *gid_for_address("192.0.2.1"), "RoCE v2", "veth0"});
  d.ports.push_back(p);
  s.devices.push_back(d);
  s.software_device["rxe0"] = true;
  NetdevFacts n;
  n.name = "veth0";
  n.mtu = 1500;
  n.operstate = "up";
  n.software = true;
  n.dcb.support = DcbState::kAbsent;
  s.netdevs["veth0"] = n;
  TargetFacts t;
  t.traddr = "192.0.2.2";
  t.route.found = true;
  t.route.oif = "veth0";
  t.route.src = "192.0.2.1";
  t.route.table = 100;
  t.route.neighbour = "PERMANENT";
  s.target = t;
  s.host.hostnqn = "nqn.2014-08.org.nvmexpress:uuid:6f1f7b3a-1b1e-4c5e-9d1a-0c0ffee0d00d\n";
  s.host.hostid = "6f1f7b3a-1b1e-4c5e-9d1a-0c0ffee0d00d\n";
  s.modules.rnvme_loaded = true;
  s.modules.nvme_fabrics_loaded = true;
  s.modules.block_file = "/etc/modprobe.d/rnvme-test-block-inbox.conf";
  s.modules.kernels.push_back({"6.1.0-56-amd64", true, true, "", false});
  s.queues.online_cpus = 2;
  return s;
}

// ------------------------------------------------------------------ the healthy baseline

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

// Every check that is not ok says why and how to fix it, in every fixture and fault below.
void expect_actionable(const DoctorReport& r) {
  for (const auto& c : r.checks)
    if (c.severity != Severity::kOk) {
      EXPECT_FALSE(c.why.empty()) << c.id;
      EXPECT_FALSE(c.fix.empty()) << c.id;
    }
}

// ------------------------------------------------------------------ RDMA devices and ports

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

// ------------------------------------------------------------------ the target

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

// ------------------------------------------------------------------ lossless

TEST(DoctorLossless, MapTosThroughTheDscpAppTable) {
  DcbState d;
  d.support = DcbState::kPresent;
  d.apps = {{5, 3, 26}, {5, 7, 48}, {1, 4, 0x8915}};
  auto m = map_tos(d, 106);  // DSCP 26 with ECT(0)
  EXPECT_EQ(m.dscp, 26);
  ASSERT_TRUE(m.priority);
  EXPECT_EQ(*m.priority, 3);
  m = map_tos(d, 0);
  EXPECT_FALSE(m.priority) << "DSCP trust without an entry: the device decides";
  EXPECT_TRUE(has(m.how, "no entry for DSCP 0"));
  d.apps = {{1, 4, 0x8915}};  // only an ethertype entry: PCP trust
  m = map_tos(d, 106);
  ASSERT_TRUE(m.priority);
  EXPECT_EQ(*m.priority, 0);
  d.support = DcbState::kAbsent;
  EXPECT_FALSE(map_tos(d, 106).priority);
}

TEST(DoctorLossless, TosToSkbPriorityIsTheKernelsTable) {
  EXPECT_EQ(tos_to_skb_priority(0), 0);
  EXPECT_EQ(tos_to_skb_priority(0x10), 6);  // IPTOS_LOWDELAY: TC_PRIO_INTERACTIVE
  EXPECT_EQ(tos_to_skb_priority(0x08), 2);  // IPTOS_THROUGHPUT: TC_PRIO_BULK
  EXPECT_EQ(tos_to_skb_priority(0x18), 4);  // both: TC_PRIO_INTERACTIVE_BULK
  EXPECT_EQ(tos_to_skb_priority(0x04), 0);  // IPTOS_RELIABILITY: best effort
  EXPECT_EQ(tos_to_skb_priority(106), 2);   // DSCP 26 + ECT(0): 0x6a & 0x1e = 0x0a
}

TEST(DoctorLossless, PcpTrustOnAVlanUsesItsEgressQosMap) {
  DcbState d;
  d.support = DcbState::kPresent;
  std::map<int, int> egress = {{0, 3}, {2, 5}};
  auto m = map_tos(d, 0, &egress);
  ASSERT_TRUE(m.priority);
  EXPECT_EQ(*m.priority, 3);
  EXPECT_TRUE(has(m.how, "egress-qos-map gives skb priority 0 (of tos 0) PCP 3")) << m.how;
  m = map_tos(d, 106, &egress);
  EXPECT_EQ(*m.priority, 5);
  m = map_tos(d, 0x10, &egress);  // skb priority 6: not in the map
  EXPECT_EQ(*m.priority, 0);
  EXPECT_TRUE(has(m.how, "(unmapped)"));
  d.apps = {{5, 4, 0}};  // DSCP trust: the VLAN's PCP does not matter
  EXPECT_EQ(*map_tos(d, 0, &egress).priority, 4);
}

TEST(DoctorLossless, MapTosFollowsTheTrustTable) {
  DcbState d;
  d.support = DcbState::kPresent;
  d.apps = {{5, 3, 26}};
  d.trust = {255};  // PCP only: the DSCP entries are not used
  auto m = map_tos(d, 104);
  ASSERT_TRUE(m.priority);
  EXPECT_EQ(*m.priority, 0);
  EXPECT_TRUE(has(m.how, "trust table does not include DSCP"));
  d.trust = {5, 255};
  m = map_tos(d, 104);
  ASSERT_TRUE(m.priority);
  EXPECT_EQ(*m.priority, 3);
  d.apps.clear();  // DSCP trusted but not mapped
  EXPECT_FALSE(map_tos(d, 104).priority);
}

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

// ------------------------------------------------------------------ host identity

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

// ------------------------------------------------------------------ modules

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

// ------------------------------------------------------------------ queue budget

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

// ------------------------------------------------------------------ fixtures of real NICs

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
  collect(s);
  EXPECT_GE(ids.size(), 23u);
  for (const auto& id : ids) EXPECT_TRUE(has(doc.str(), "\n" + id + "\n   **What**")) << id << " is not documented";
}

// ------------------------------------------------------------------ snapshot JSON and rendering

TEST(DoctorSnapshotJson, RoundTrips) {
  for (const char* f : {"softroce-vm.json", "mlx5-connectx5-lossless.json", "mlx5-connectx5-vlan-pcp.json",
                        "e810-irdma-dscp-partial.json", "bnxt-re-lossless.json"}) {
    auto s = fixture(f);
    auto j = snapshot_to_json(s);
    auto back = snapshot_from_json(j);
    ASSERT_TRUE(back.ok()) << f;
    EXPECT_EQ(snapshot_to_json(*back), j) << f;
  }
  auto s = softroce();
  auto back = snapshot_from_json(snapshot_to_json(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(snapshot_to_json(*back), snapshot_to_json(s));
}

TEST(DoctorSnapshotJson, BadTypesAreAnError) {
  auto r = snapshot_from_json(nlohmann::json{{"devices", {{{"name", 5}}}}});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(has(r.error().message, "bad doctor snapshot"));
  EXPECT_FALSE(snapshot_from_json(nlohmann::json::array()).ok());
}

TEST(DoctorSnapshotJson, NonIntegerPriorityKeyIsAnError) {
  for (const char* key : {"x", "99999999999", ""}) {
    nlohmann::json j{{"netdevs", {{"eth0", {{"egress_qos", {{key, 3}}}}}}}};
    Result<DoctorSnapshot> r = DoctorSnapshot{};
    EXPECT_NO_THROW(r = snapshot_from_json(j)) << key;
    ASSERT_FALSE(r.ok()) << key;
    EXPECT_TRUE(has(r.error().message, "is not an integer")) << r.error().message;
  }
  nlohmann::json ok{{"netdevs", {{"eth0", {{"ecn_np", {{"3", true}}}}}}}};
  auto r = snapshot_from_json(ok);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.value().netdevs.at("eth0").ecn_np.at(3));
}

// The whole rendering of one fixture, text and JSON, against reviewed golden files.
TEST(DoctorPrinter, GoldenE810) {
  DoctorReport r = run_doctor_checks(fixture("e810-irdma-dscp-partial.json"));
  std::ostringstream out, err, jout;
  Printer(Format::kText, out, err).print(r);
  testing::expect_golden("doctor-e810.txt", out.str());
  Printer(Format::kJson, jout, err).print(r);
  testing::expect_golden("doctor-e810.json", jout.str());
}

TEST(DoctorPrinter, TextAndJsonFromOneReport) {
  auto s = softroce();
  s.tos = 96;
  DoctorReport r = run_doctor_checks(s);
  std::ostringstream out, err;
  Printer p(Format::kText, out, err);
  p.print(r);
  const std::string text = out.str();
  EXPECT_TRUE(has(text, "\nwarn  lossless.tos ")) << text;
  EXPECT_TRUE(has(text, "      fix: configure DCB on the RoCE NIC")) << text;
  EXPECT_TRUE(text.ends_with(" ok, 1 warning, 0 failures\n")) << text;
  std::ostringstream jout;
  Printer pj(Format::kJson, jout, err);
  pj.print(r);
  auto j = nlohmann::json::parse(jout.str());
  EXPECT_EQ(j["status"], "warn");
  EXPECT_EQ(j["exit_status"], 1);
  EXPECT_EQ(j["summary"]["warn"], 1);
  EXPECT_EQ(j["checks"].size(), r.checks.size());
  bool found = false;
  for (const auto& c : j["checks"])
    if (c["id"] == "lossless.tos") {
      found = true;
      EXPECT_EQ(c["severity"], "warn");
      EXPECT_TRUE(c["fix"].is_string());
    } else if (c["severity"] == "ok") {
      EXPECT_TRUE(c["fix"].is_null());
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(j["version"], kJsonSchemaVersion);
}

}  // namespace
}  // namespace rnvme
