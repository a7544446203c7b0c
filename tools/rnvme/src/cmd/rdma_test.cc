#include <gtest/gtest.h>

#include "cmd/commands.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;

TEST(RdmaCmd, ShowMergesNetlinkAndSysfsGids) {
  TestEnv env;
  env.json();
  add_rxe(env, "192.168.50.1");
  ASSERT_TRUE(run_rdma(env.ctx, {}).ok());
  auto j = nlohmann::json::parse(env.out.str());
  const auto& port = j["devices"][0]["ports"][0];
  EXPECT_EQ(j["devices"][0]["name"], "rxe0");
  EXPECT_EQ(port["state"], "ACTIVE");
  EXPECT_EQ(port["netdev"], "eth0");
  EXPECT_EQ(port["active_mtu"], 1024);
  ASSERT_EQ(port["gids"].size(), 2u);
  EXPECT_EQ(port["gids"][1]["type"], "RoCE v2");
  EXPECT_EQ(port["gids"][1]["gid"], "0000:0000:0000:0000:0000:ffff:c0a8:3201");
}

// What admins look for: the address, the type and the netdev of each GID, from the sysfs
// files show_gids reads (gids/N, gid_attrs/types/N, gid_attrs/ndevs/N).
TEST(RdmaCmd, TextShowsGidsAsAddressesWithTypeAndNetdev) {
  TestEnv env;
  add_rxe(env, "192.168.50.1");
  const std::string base = "/sys/class/infiniband/rxe0/ports/1";
  env.fs.add(base + "/gids/3", "fd00:0000:0000:0000:0000:0000:0000:0042\n");
  env.fs.add(base + "/gid_attrs/types/3", "RoCE v2\n");
  env.fs.add(base + "/gid_attrs/ndevs/3", "eth0.100\n");
  ASSERT_TRUE(run_rdma(env.ctx, {}).ok());
  const std::string out = env.out.str();
  EXPECT_NE(out.find("    gid 0   192.168.50.1     RoCE v1  eth0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("    gid 1   192.168.50.1     RoCE v2  eth0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("    gid 3   fd00::42         RoCE v2  eth0.100\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("c0a8"), std::string::npos) << "hex only in JSON: " << out;
  EXPECT_EQ(out.find("gid 2"), std::string::npos) << "zero GIDs are not listed: " << out;
}

TEST(RdmaCmd, JsonKeepsTheRawGidBesideTheAddress) {
  TestEnv env;
  env.json();
  add_rxe(env, "192.168.50.1");
  ASSERT_TRUE(run_rdma(env.ctx, {}).ok());
  const auto j = nlohmann::json::parse(env.out.str());
  const auto& gids = j["devices"][0]["ports"][0]["gids"];
  ASSERT_EQ(gids.size(), 2u);
  EXPECT_EQ(gids[0], nlohmann::json({{"index", 0},
                                     {"address", "192.168.50.1"},
                                     {"gid", "0000:0000:0000:0000:0000:ffff:c0a8:3201"},
                                     {"type", "RoCE v1"},
                                     {"ndev", "eth0"}}));
}

// An InfiniBand port: sysfs calls its GIDs "IB/RoCE v1" and gives them no netdev.
TEST(RdmaCmd, InfinibandGidsAreTypedIb) {
  TestEnv env;
  env.netlink.unavailable = true;
  const std::string base = "/sys/class/infiniband/mlx5_0/ports/1";
  env.fs.add("/sys/class/infiniband/mlx5_0/node_type", "1: CA\n");
  env.fs.add(base + "/state", "4: ACTIVE\n");
  env.fs.add(base + "/phys_state", "5: LinkUp\n");
  env.fs.add(base + "/link_layer", "InfiniBand\n");
  env.fs.add(base + "/gids/0", "fe80:0000:0000:0000:248a:0703:0049:d4f0\n");
  env.fs.add(base + "/gid_attrs/types/0", "IB/RoCE v1\n");
  ASSERT_TRUE(run_rdma(env.ctx, {}).ok());
  EXPECT_NE(env.out.str().find("    gid 0   fe80::248a:703:49:d4f0  IB       -\n"), std::string::npos)
      << env.out.str();
}

TEST(RdmaCmd, UnknownActiveMtuIsNull) {
  TestEnv env;
  env.json();
  add_rxe(env, "192.168.50.1");
  env.ports.mtu.clear();  // no verbs access
  ASSERT_TRUE(run_rdma(env.ctx, {}).ok());
  auto j = nlohmann::json::parse(env.out.str());
  EXPECT_TRUE(j["devices"][0]["ports"][0]["active_mtu"].is_null());
  EXPECT_EQ(j["devices"][0]["ports"][0]["netdev_mtu"], 1500);
}

TEST(RdmaCmd, FallsBackToSysfsWithoutNetlink) {
  TestEnv env;
  add_rxe(env, "192.168.50.1");
  env.netlink.unavailable = true;
  ASSERT_TRUE(run_rdma(env.ctx, {{"show"}}).ok());
  EXPECT_NE(env.out.str().find("rxe0/1: state ACTIVE"), std::string::npos) << env.out.str();
  EXPECT_NE(env.out.str().find("RoCE v2"), std::string::npos);
}

TEST(RdmaCmd, NoNetlinkAndNoSysfsIsAnError) {
  TestEnv env;
  env.netlink.unavailable = true;
  EXPECT_EQ(run_rdma(env.ctx, {}).error().code, ErrorCode::kEnvironment);
}

TEST(RdmaCmd, LinkAddAndDelete) {
  TestEnv env;
  ASSERT_TRUE(run_rdma(env.ctx, {{"link", "add", "rxe1", "type", "rxe", "netdev", "eth1"}}).ok());
  ASSERT_TRUE(run_rdma(env.ctx, {{"link", "del", "rxe1"}}).ok());
  EXPECT_EQ(env.netlink.calls, (std::vector<std::string>{"add rxe1 rxe eth1", "del rxe1"}));
  EXPECT_EQ(run_rdma(env.ctx, {{"link", "delete", "rxe1"}}).error().code, ErrorCode::kNotFound);
}

TEST(RdmaCmd, LinkGrammarErrors) {
  TestEnv env;
  for (std::vector<std::string> w : std::vector<std::vector<std::string>>{
           {"link"},
           {"link", "add", "rxe1"},
           {"link", "add", "rxe1", "type", "rxe"},
           {"link", "add", "rxe1", "type", "rxe", "netdev"},
           {"link", "add", "rxe1", "kind", "rxe", "netdev", "eth1"},
           {"link", "del", "rxe1", "now"},
           {"bogus"}}) {
    auto st = run_rdma(env.ctx, {w});
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, ErrorCode::kUsage);
  }
  EXPECT_TRUE(env.netlink.calls.empty());
}

TEST(RdmaCmd, DryRunChangesNothing) {
  TestEnv env;
  env.ctx.dry_run = true;
  ASSERT_TRUE(run_rdma(env.ctx, {{"link", "add", "rxe1", "type", "rxe", "netdev", "eth1"}}).ok());
  EXPECT_TRUE(env.netlink.calls.empty());
  EXPECT_NE(env.err.str().find("would add RDMA link rxe1"), std::string::npos);
}

}  // namespace
}  // namespace rnvme
