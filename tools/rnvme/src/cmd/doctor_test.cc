#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cmd/commands.h"
#include "core/doctor.h"
#include "sys/fabric_probe.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;

bool has(const std::string& hay, std::string_view needle) { return hay.find(needle) != std::string::npos; }

// A Soft-RoCE host in the fake sysfs: rxe0 on eth0 (192.168.50.1), target 192.168.50.10 on link,
// rnvme loaded with the packaged redirect, DKMS-built for the running kernel.
struct DoctorEnv : TestEnv {
  FakeFabricProbe probe;
  DoctorEnv() {
    add_rxe(*this, "192.168.50.1");
    add_host_identity(fs);
    add_modules(fs);
    fs.add("/sys/class/infiniband/rxe0/parent", "eth0\n");
    fs.add("/sys/class/net/eth0/operstate", "up\n");
    fs.add("/sys/class/net/eth0/ifindex", "2\n");
    fs.add("/sys/module/rnvme/parameters/transport_name", "rdma\n");
    fs.add("/etc/modprobe.d/rnvme.conf",
           "# comment\ninstall nvme-rdma [ -d /sys/module/rnvme ] || \\\n"
           "if /sbin/modprobe -q -n rnvme; then \\\n"
           "\t/sbin/modprobe --ignore-install rnvme $CMDLINE_OPTS; \\\nfi\n"
           "remove nvme-rdma /sbin/modprobe -r --ignore-remove rnvme\n");
    fs.add("/proc/sys/kernel/osrelease", "6.1.0-56-amd64\n");
    fs.add("/lib/modules/6.1.0-56-amd64/modules.order", "");
    fs.add_dir("/lib/modules/6.1.0-56-amd64/kernel");
    fs.add_dir("/lib/modules/6.1.0-56-amd64/build");
    fs.add("/lib/modules/6.1.0-56-amd64/updates/dkms/rnvme.ko", "");
    fs.add_dir("/lib/modules/6.12.9-amd64/build");  // headers only: not an installed kernel
    fs.add("/var/lib/dkms/rnvme/0.1/6.1.0-56-amd64/x86_64/module/rnvme.ko", "");
    fs.add("/sys/devices/system/cpu/online", "0-3,6\n");
    RouteFacts r;
    r.found = true;
    r.oif = "eth0";
    r.src = "192.168.50.1";
    r.table = 254;
    probe.routes["192.168.50.10"] = r;
    probe.neighbours["eth0 192.168.50.10"] = "REACHABLE";
  }
  nlohmann::json run(DoctorArgs args) {
    args.json = true;
    auto st = run_doctor(ctx, probe, args);
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
    return nlohmann::json::parse(out.str());
  }
};

const nlohmann::json* check(const nlohmann::json& j, const std::string& id, const std::string& subject = {}) {
  for (const auto& c : j["checks"])
    if (c["id"] == id && (subject.empty() || c["subject"] == subject)) return &c;
  return nullptr;
}

TEST(DoctorCmd, GathersTheHostThroughTheAdapters) {
  DoctorEnv env;
  DoctorArgs a;
  a.traddr = "192.168.50.10";
  env.fs.add("/sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos", "106\n");
  env.fs.add("/sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_mode", "RoCE v2\n");
  DoctorSnapshot s = gather_doctor_snapshot(env.ctx, env.probe, a);
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

TEST(DoctorCmd, HealthyHostExitsZero) {
  DoctorEnv env;
  DoctorArgs a;
  a.traddr = "192.168.50.10";
  auto j = env.run(a);
  EXPECT_EQ(j["status"], "ok") << j.dump(2);
  EXPECT_EQ(env.ctx.exit_status, 0);
  ASSERT_TRUE(check(j, "target.source_gid"));
  EXPECT_TRUE(has((*check(j, "target.source_gid"))["seen"], "GID index 1 of rxe0/1 (RoCE v2, IPv4-mapped"));
  EXPECT_TRUE(has((*check(j, "module.redirect"))["seen"], "/etc/modprobe.d/rnvme.conf redirects"));
  EXPECT_TRUE(has((*check(j, "module.dkms", "6.1.0-56-amd64"))["seen"], "rnvme built for 6.1.0-56-amd64 (running)"));
}

TEST(DoctorCmd, FaultsSetTheExitStatus) {
  {
    DoctorEnv env;
    env.fs.remove("/etc/nvme/hostid");
    env.run({});
    EXPECT_EQ(env.ctx.exit_status, 1);
  }
  {
    DoctorEnv env;
    env.fs.add_dir("/sys/module/nvme_rdma");
    auto j = env.run({});
    EXPECT_EQ(env.ctx.exit_status, 2);
    EXPECT_EQ((*check(j, "module.conflict"))["severity"], "fail");
  }
  {
    DoctorEnv env;
    DoctorArgs a;
    a.traddr = "198.51.100.7";
    auto j = env.run(a);
    EXPECT_EQ(env.ctx.exit_status, 2);
    EXPECT_TRUE(has((*check(j, "target.route"))["seen"], "Network is unreachable"));
  }
  {
    DoctorEnv env;
    env.fs.remove("/etc/modprobe.d/rnvme.conf");
    env.fs.add("/etc/modprobe.d/block.conf", "install nvme_rdma /bin/true\n");
    DoctorArgs a;
    auto s = gather_doctor_snapshot(env.ctx, env.probe, a);
    EXPECT_EQ(s.modules.block_file, "/etc/modprobe.d/block.conf");
  }
}

TEST(DoctorCmd, ExistingControllersGiveGrantedQueuesAndIdentitiesInUse) {
  DoctorEnv env;
  add_controller(env.fs, "nvme0", "nvme-subsys0", kSubnqn, "rdma", "192.168.50.10", "4420");
  add_controller(env.fs, "nvme3", "nvme-subsys3", "nqn.2014.08.org.nvmexpress:8086", "pcie", "", "");
  DoctorArgs a;
  a.traddr = "192.168.50.10";
  auto s = gather_doctor_snapshot(env.ctx, env.probe, a);
  ASSERT_EQ(s.queues.controllers.size(), 1u) << "PCIe has no queues to budget";
  EXPECT_EQ(s.queues.controllers[0].queue_count, 3);
  EXPECT_EQ(s.queues.controllers[0].trsvcid, "4420");
  ASSERT_EQ(s.host_in_use.size(), 1u);
  EXPECT_EQ(s.host_in_use[0].controller, "nvme0");
  auto j = env.run(a);
  EXPECT_TRUE(has((*check(j, "queues.budget", "rxe0"))["seen"], "(192.168.50.10 granted 2)"));
  EXPECT_EQ((*check(j, "host.in_use"))["severity"], "ok");
}

TEST(DoctorCmd, AVlanRouteReadsTheVlanAndItsRealDevice) {
  DoctorEnv env;
  env.fs.add("/sys/class/net/eth0.100/mtu", "1500\n");
  env.probe.vlans["eth0.100"] = VlanFacts{true, "eth0", 100, {{0, 3}}};
  RouteFacts r = env.probe.routes["192.168.50.10"];
  r.oif = "eth0.100";
  env.probe.routes["10.100.0.10"] = r;
  DoctorArgs a;
  a.traddr = "10.100.0.10";
  auto s = gather_doctor_snapshot(env.ctx, env.probe, a);
  ASSERT_TRUE(s.netdevs.count("eth0.100"));
  EXPECT_EQ(s.netdevs["eth0.100"].vlan_of, "eth0");
  EXPECT_EQ(s.netdevs["eth0.100"].vlan_id, 100);
  EXPECT_EQ(s.netdevs["eth0.100"].egress_qos, (std::map<int, int>{{0, 3}}));
  EXPECT_TRUE(s.netdevs.count("eth0"));
}

TEST(DoctorCmd, DcbAndEcnComeFromTheProbeAndSysfs) {
  DoctorEnv env;
  DcbState d;
  d.support = DcbState::kPresent;
  d.has_pfc = true;
  d.pfc_en = 1u << 3;
  d.apps = {{5, 3, 26}};
  env.probe.dcbs["eth0"] = d;
  env.fs.add("/sys/class/net/eth0/ecn/roce_np/enable/3", "1\n");
  env.fs.add("/sys/class/net/eth0/ecn/roce_rp/enable/3", "0\n");
  DoctorArgs a;
  a.traddr = "192.168.50.10";
  a.tos = 104;
  auto s = gather_doctor_snapshot(env.ctx, env.probe, a);
  EXPECT_EQ(s.netdevs["eth0"].ecn_np, (std::map<int, bool>{{3, true}}));
  EXPECT_EQ(s.netdevs["eth0"].ecn_rp, (std::map<int, bool>{{3, false}}));
  auto j = env.run(a);
  EXPECT_EQ((*check(j, "lossless.tos", "eth0"))["severity"], "ok");
  EXPECT_EQ((*check(j, "lossless.ecn", "eth0"))["severity"], "warn");
}

TEST(DoctorCmd, BadArgumentsAreUsageErrors) {
  DoctorEnv env;
  DoctorArgs a;
  a.traddr = "target.example";
  auto st = run_doctor(env.ctx, env.probe, a);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kUsage);
  EXPECT_TRUE(has(st.error().message, "not an IPv4 or IPv6 address"));
  a = {};
  a.trsvcid = "4420";
  st = run_doctor(env.ctx, env.probe, a);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(has(st.error().message, "--trsvcid needs --traddr"));
  a.traddr = "192.168.50.10";
  a.trsvcid = "70000";
  EXPECT_FALSE(run_doctor(env.ctx, env.probe, a).ok());
  a.trsvcid = "4420";
  a.tos = 256;
  EXPECT_FALSE(run_doctor(env.ctx, env.probe, a).ok());
  EXPECT_TRUE(env.out.str().empty()) << "nothing printed on a usage error";
}

TEST(DoctorCmd, ChecksARecordedSnapshot) {
  DoctorEnv env;
  DoctorArgs a;
  std::ifstream in(std::string(RNVME_TESTDATA_DIR) + "/doctor/mlx5-connectx5-default-tos.json");
  std::stringstream text;
  text << in.rdbuf();
  env.fs.add("/tmp/mlx5.json", text.str());
  a.snapshot_file = "/tmp/mlx5.json";
  auto j = env.run(a);
  EXPECT_EQ(env.ctx.exit_status, 2);
  EXPECT_EQ((*check(j, "lossless.tos", "ens1f0np0"))["severity"], "fail");
  a.snapshot_file = "/nonexistent/snapshot.json";
  auto st = run_doctor(env.ctx, env.probe, a);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kNotFound);
  env.fs.add("/tmp/bad.json", "{ not json");
  a.snapshot_file = "/tmp/bad.json";
  st = run_doctor(env.ctx, env.probe, a);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kUsage);
  EXPECT_TRUE(has(st.error().message, "/tmp/bad.json: not JSON"));
}

TEST(DoctorCmd, DumpSnapshotRoundTripsThroughSnapshot) {
  DoctorEnv env;
  DoctorArgs a;
  a.traddr = "192.168.50.10";
  a.dump_snapshot = true;
  auto j = env.run(a);
  EXPECT_EQ(j["target"]["route"]["oif"], "eth0");
  auto back = snapshot_from_json(j);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(run_doctor_checks(*back).exit_status(), 0);
}

}  // namespace
}  // namespace rnvme
