#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cmd/commands.h"
#include "core/doctor.h"
#include "sys/fabric_probe.h"
#include "testing/doctor_env.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;

bool has(const std::string& hay, std::string_view needle) { return hay.find(needle) != std::string::npos; }

const nlohmann::json* check(const nlohmann::json& j, const std::string& id, const std::string& subject = {}) {
  for (const auto& c : j["checks"])
    if (c["id"] == id && (subject.empty() || c["subject"] == subject)) return &c;
  return nullptr;
}

TEST(DoctorCmd, GatherWiresTheContextToTheReaders) {
  DoctorEnv env;
  DoctorArgs a;
  a.traddr = "192.168.50.10";
  a.tos = 106;
  DoctorSnapshot s = gather_doctor_snapshot(env.ctx, env.probe, a);
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0].ports[0].active_mtu, 1024) << "the inventory of cmd/context.h";
  ASSERT_TRUE(s.target);
  EXPECT_EQ(s.target->traddr, "192.168.50.10");
  EXPECT_EQ(s.target->route.neighbour, "REACHABLE");
  EXPECT_EQ(s.tos, 106);
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

// nvme0 and nvme1: two rnvme paths to one subsystem; nvme2: one rnvme path to another; nvme3:
// PCIe.  Every rnvme controller reports a CQT of `cqt` and a 15 s hold; failover_hold is `param`.
void add_rnvme_paths(DoctorEnv& env, const std::string& param, const std::string& cqt) {
  add_sample_controllers(env.fs);
  for (const char* c : {"nvme0", "nvme1", "nvme2"}) {
    const std::string d = std::string("/sys/class/nvme/") + c + "/rnvme/";
    env.fs.add(d + "cqt_ms", cqt + "\n");
    env.fs.add(d + "failover_hold_ms", param == "Y" ? "15000\n" : "0\n");
    env.fs.add(d + "held_commands", "0\n");
    env.fs.add(d + "ccr_offered", "0\n");
  }
  if (!param.empty()) env.fs.add("/sys/module/rnvme/parameters/failover_hold", param + "\n");
}

TEST(DoctorCmd, MultipathWithTheHoldOffWarns) {
  DoctorEnv env;
  add_rnvme_paths(env, "N", "0");
  auto s = gather_doctor_snapshot(env.ctx, env.probe, {});
  EXPECT_EQ(s.modules.rnvme_failover_hold, false);
  ASSERT_EQ(s.subsystems.size(), 2u) << "PCIe is not rnvme's";
  ASSERT_EQ(s.subsystems[0].controllers.size(), 2u);
  EXPECT_EQ(s.subsystems[0].controllers[1].name, "nvme1");
  EXPECT_EQ(s.subsystems[0].controllers[1].cqt_ms, 0);
  EXPECT_EQ(s.subsystems[1].controllers.size(), 1u);
  auto j = env.run({});
  EXPECT_EQ(env.ctx.exit_status, 1) << j.dump(2);
  ASSERT_TRUE(check(j, "multipath.failover_hold", "nvme-subsys0"));
  EXPECT_EQ((*check(j, "multipath.failover_hold", "nvme-subsys0"))["severity"], "warn");
  EXPECT_TRUE(has((*check(j, "multipath.failover_hold", "nvme-subsys0"))["why"],
                  "a late write on the lost path can overwrite newer data"));
  EXPECT_FALSE(check(j, "multipath.failover_hold", "nvme-subsys2")) << "one path";
  EXPECT_FALSE(check(j, "multipath.cqt"));
}

TEST(DoctorCmd, MultipathWithTheHoldOnAndNeitherCqtNorCcrWarns) {
  DoctorEnv env;
  add_rnvme_paths(env, "Y", "0");
  auto s = gather_doctor_snapshot(env.ctx, env.probe, {});
  ASSERT_EQ(s.subsystems.size(), 2u);
  EXPECT_EQ(s.subsystems[0].controllers[0].ccr_offered, 0) << "read from rnvme/ccr_offered";
  auto j = env.run({});
  EXPECT_EQ(env.ctx.exit_status, 1) << j.dump(2);
  EXPECT_TRUE(has((*check(j, "multipath.failover_hold", "nvme-subsys0"))["seen"],
                  "failover hold on: nvme0 15000 ms, nvme1 15000 ms"));
  ASSERT_TRUE(check(j, "multipath.cqt", "nvme-subsys0"));
  EXPECT_EQ((*check(j, "multipath.cqt", "nvme-subsys0"))["severity"], "warn");
  EXPECT_TRUE(has((*check(j, "multipath.cqt", "nvme-subsys0"))["seen"], "nvme0, nvme1 report neither a Command Quiesce Time"));

  DoctorEnv cqt;
  add_rnvme_paths(cqt, "Y", "100");
  auto k = cqt.run({});
  EXPECT_EQ((*check(k, "multipath.cqt", "nvme-subsys0"))["seen"], "CQT nvme0 100 ms, nvme1 100 ms, part of the hold");

  // rnvme.ko from before the hold: its controllers have an rnvme directory but no hold files
  DoctorEnv old;
  add_sample_controllers(old.fs);
  for (const char* c : {"nvme0", "nvme1"}) old.fs.add(std::string("/sys/class/nvme/") + c + "/rnvme/reconnects", "0\n");
  auto o = old.run({});
  EXPECT_EQ(old.ctx.exit_status, 1);
  EXPECT_TRUE(has((*check(o, "multipath.failover_hold", "nvme-subsys0"))["seen"], "has no failover hold"));
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
