#include "sys/doctor_facts.h"

#include <gtest/gtest.h>

#include "cmd/context.h"
#include "testing/doctor_env.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;

TEST(DoctorFacts, ReadsTheHostThroughTheAdapters) {
  DoctorEnv env;
  env.fs.add("/sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos", "106\n");
  env.fs.add("/sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_mode", "RoCE v2\n");
  // The RDMA inventory is an input (cmd/context.h reads it through netlink, sysfs and verbs).
  DoctorSnapshot s = read_doctor_snapshot(env.fs, env.probe, rdma_inventory(env.ctx),
                                          {"192.168.50.10", "", std::nullopt});
  EXPECT_EQ(s.default_roce_tos, (std::map<std::string, int>{{"rxe0/1", 106}}));
  EXPECT_EQ(s.default_roce_mode, (std::map<std::string, std::string>{{"rxe0/1", "RoCE v2"}}));
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_TRUE(s.software_device["rxe0"]);
  EXPECT_EQ(s.devices[0].ports[0].active_mtu, 1024);
  ASSERT_TRUE(s.netdevs.count("eth0"));
  EXPECT_EQ(s.netdevs["eth0"].mtu, 1500);
  EXPECT_EQ(s.netdevs["eth0"].operstate, "up");
  EXPECT_TRUE(s.netdevs["eth0"].software);
  EXPECT_EQ(s.netdevs["eth0"].dcb.support, DcbState::kAbsent);
  ASSERT_TRUE(s.target);
  EXPECT_EQ(s.target->route.neighbour, "REACHABLE");
  EXPECT_EQ(s.modules.redirect_file, "/etc/modprobe.d/rnvme.conf") << "continued install line";
  EXPECT_TRUE(s.modules.block_file.empty());
  ASSERT_EQ(s.modules.kernels.size(), 1u) << "a headers-only directory is no kernel";
  EXPECT_TRUE(s.modules.kernels[0].running);
  EXPECT_TRUE(s.modules.kernels[0].dkms_built);
  EXPECT_EQ(s.modules.kernels[0].rnvme_module, "/lib/modules/6.1.0-56-amd64/updates/dkms/rnvme.ko");
  EXPECT_EQ(s.modules.dkms_versions, std::vector<std::string>{"0.1"});
  EXPECT_EQ(s.queues.online_cpus, 5);
  EXPECT_TRUE(s.host.hostnqn && s.host.hostid);
}

TEST(DoctorFacts, AnInstallLineToTrueBlocksTheInTreeModule) {
  DoctorEnv env;
  env.fs.remove("/etc/modprobe.d/rnvme.conf");
  env.fs.add("/etc/modprobe.d/block.conf", "install nvme_rdma /bin/true\n");
  ModuleFacts m = read_module_facts(env.fs);
  EXPECT_EQ(m.block_file, "/etc/modprobe.d/block.conf");
  EXPECT_TRUE(m.redirect_file.empty());
}

TEST(DoctorFacts, AVlanRouteReadsTheVlanAndItsRealDevice) {
  DoctorEnv env;
  env.fs.add("/sys/class/net/eth0.100/mtu", "1500\n");
  env.probe.vlans["eth0.100"] = VlanFacts{true, "eth0", 100, {{0, 3}}};
  RouteFacts r = env.probe.routes["192.168.50.10"];
  r.oif = "eth0.100";
  env.probe.routes["10.100.0.10"] = r;
  auto s = read_doctor_snapshot(env.fs, env.probe, rdma_inventory(env.ctx),
                                {"10.100.0.10", "", std::nullopt});
  ASSERT_TRUE(s.netdevs.count("eth0.100"));
  EXPECT_EQ(s.netdevs["eth0.100"].vlan_of, "eth0");
  EXPECT_EQ(s.netdevs["eth0.100"].vlan_id, 100);
  EXPECT_EQ(s.netdevs["eth0.100"].egress_qos, (std::map<int, int>{{0, 3}}));
  EXPECT_TRUE(s.netdevs.count("eth0"));
}

TEST(DoctorFacts, NetdevEcnComesFromSysfsAndDcbFromTheProbe) {
  DoctorEnv env;
  DcbState d;
  d.support = DcbState::kPresent;
  d.pfc_en = 1u << 3;
  env.probe.dcbs["eth0"] = d;
  env.fs.add("/sys/class/net/eth0/ecn/roce_np/enable/3", "1\n");
  env.fs.add("/sys/class/net/eth0/ecn/roce_rp/enable/3", "0\n");
  NetdevFacts n = read_netdev_facts(env.fs, env.probe, "eth0");
  EXPECT_EQ(n.ifindex, 2);
  EXPECT_EQ(n.dcb.support, DcbState::kPresent);
  EXPECT_EQ(n.dcb.pfc_en, 1u << 3);
  EXPECT_EQ(n.ecn_np, (std::map<int, bool>{{3, true}}));
  EXPECT_EQ(n.ecn_rp, (std::map<int, bool>{{3, false}}));
}

TEST(DoctorFacts, CountsACpuList) {
  EXPECT_EQ(count_cpu_list("0-3,6,8-9\n"), 7);
  EXPECT_EQ(count_cpu_list("0"), 1);
  EXPECT_EQ(count_cpu_list(""), 0);
}

}  // namespace
}  // namespace rnvme
