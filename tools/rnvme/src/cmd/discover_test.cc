#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cmd/commands.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;

class DiscoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    add_host_identity(env.fs);
    env.fabrics.handler = [](const std::string&) -> Result<std::string> {
      return std::string("instance=6,cntlid=1\n");
    };
    env.dlog.pages["nvme6"] = make_discovery_log({{kSubnqn, "192.168.50.10", "4420"}});
    args.opts.traddr = "192.168.50.10";
  }
  TestEnv env;
  DiscoverArgs args;
};

TEST_F(DiscoverTest, ConnectsReadsAndDeletesTheDiscoveryController) {
  env.json();
  ASSERT_TRUE(run_discover(env.ctx, args).ok());
  ASSERT_EQ(env.fabrics.written.size(), 1u);
  EXPECT_NE(env.fabrics.written[0].find(",nqn=nqn.2014-08.org.nvmexpress.discovery"), std::string::npos);
  EXPECT_EQ(env.dlog.reads, std::vector<std::string>{"nvme6"});
  ASSERT_EQ(env.fs.writes.size(), 1u);
  EXPECT_EQ(env.fs.writes[0].first, "/sys/class/nvme/nvme6/delete_controller");
  auto j = nlohmann::json::parse(env.out.str());
  ASSERT_EQ(j["entries"].size(), 1u);
  EXPECT_EQ(j["entries"][0]["subnqn"], kSubnqn);
  EXPECT_EQ(j["entries"][0]["trsvcid"], "4420");
  EXPECT_EQ(j["entries"][0]["rdma"]["cms"], "rdma-cm");
}

TEST_F(DiscoverTest, PersistentKeepsTheController) {
  args.persistent = true;
  ASSERT_TRUE(run_discover(env.ctx, args).ok());
  EXPECT_TRUE(env.fs.writes.empty());
}

// nvme-cli (fabrics.c, set_discovery_kato) gives a persistent discovery controller
// keep_alive_tmo 30 (NVMF_DEF_DISC_TMO) unless -k says otherwise: a target that applies its
// discovery KATO drops one without keep-alive.  One that only reads the log gets none.
TEST_F(DiscoverTest, PersistentGetsNvmeClisKeepAlive) {
  args.persistent = true;
  ASSERT_TRUE(run_discover(env.ctx, args).ok());
  ASSERT_EQ(env.fabrics.written.size(), 1u);
  EXPECT_NE(env.fabrics.written[0].find(",keep_alive_tmo=30"), std::string::npos)
      << env.fabrics.written[0];

  TestEnv given;
  add_host_identity(given.fs);
  given.fabrics.handler = env.fabrics.handler;
  given.dlog.pages = env.dlog.pages;
  DiscoverArgs k = args;
  k.opts.keep_alive_tmo = 7;
  ASSERT_TRUE(run_discover(given.ctx, k).ok());
  ASSERT_EQ(given.fabrics.written.size(), 1u);
  EXPECT_NE(given.fabrics.written[0].find(",keep_alive_tmo=7"), std::string::npos)
      << given.fabrics.written[0];
  EXPECT_EQ(given.fabrics.written[0].find("keep_alive_tmo=30"), std::string::npos);

  // -k 0 is nvme-cli's "no -k" (libnvme leaves a kato of 0 out): the persistent one gets 30 s
  TestEnv zero;
  add_host_identity(zero.fs);
  zero.fabrics.handler = env.fabrics.handler;
  zero.dlog.pages = env.dlog.pages;
  DiscoverArgs z = args;
  ASSERT_TRUE(set_option(z.opts, *find_option("keep-alive-tmo"), "0").ok());
  ASSERT_TRUE(run_discover(zero.ctx, z).ok());
  ASSERT_EQ(zero.fabrics.written.size(), 1u);
  EXPECT_NE(zero.fabrics.written[0].find(",keep_alive_tmo=30"), std::string::npos)
      << zero.fabrics.written[0];

  TestEnv once;
  add_host_identity(once.fs);
  once.fabrics.handler = env.fabrics.handler;
  once.dlog.pages = env.dlog.pages;
  DiscoverArgs plain = args;
  plain.persistent = false;
  ASSERT_TRUE(run_discover(once.ctx, plain).ok());
  ASSERT_EQ(once.fabrics.written.size(), 1u);
  EXPECT_EQ(once.fabrics.written[0].find("keep_alive_tmo"), std::string::npos)
      << once.fabrics.written[0];
}

TEST_F(DiscoverTest, ExistingDeviceIsUsedAndKept) {
  args.device = "nvme6";
  ASSERT_TRUE(run_discover(env.ctx, args).ok());
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_TRUE(env.fs.writes.empty());
  EXPECT_NE(env.out.str().find(kSubnqn), std::string::npos);
}

// The well-known discovery NQN always gets a controller of its own (the kernel forces
// duplicate_connect for it), even beside a persistent one.
TEST_F(DiscoverTest, WellKnownDiscoveryNqnAlwaysConnectsAnew) {
  add_controller(env.fs, "nvme2", "nvme-subsys2", std::string(kDiscoveryNqn), "rdma",
                 "192.168.50.10", "4420");
  ASSERT_TRUE(run_discover(env.ctx, args).ok());
  EXPECT_EQ(env.fabrics.written.size(), 1u);
  EXPECT_EQ(env.dlog.reads, std::vector<std::string>{"nvme6"});
}

// A discovery controller with its own NQN that is connected already is read and left alone.
TEST_F(DiscoverTest, ConnectedUniqueDiscoveryControllerIsUsedAndKept) {
  const std::string udc = "nqn.2024-01.io.rnvme:discovery-a";
  add_controller(env.fs, "nvme2", "nvme-subsys2", udc, "rdma", "192.168.50.10", "4420");
  env.dlog.pages["nvme2"] = make_discovery_log({{kSubnqn, "192.168.50.10", "4420"}});
  args.opts.nqn = udc;
  ASSERT_TRUE(run_discover(env.ctx, args).ok());
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_EQ(env.dlog.reads, std::vector<std::string>{"nvme2"});
  EXPECT_TRUE(env.fs.writes.empty());  // not deleted
  EXPECT_NE(env.out.str().find(kSubnqn), std::string::npos);
}

// -J: the discovery controller's port in config.json gives what the command line leaves unset.
TEST_F(DiscoverTest, ConfigJsonGivesTheDiscoveryControllersOptions) {
  const std::string port = R"(", "ports": [{"transport": "rdma", "traddr": "192.168.50.10", "host_traddr": "192.168.50.1", "tos": 96}]}]}])";
  env.fs.add("/etc/nvme/config.json",
             std::string(R"([{"subsystems": [{"nqn": ")") + std::string(kDiscoveryNqn) + port);
  env.fs.add("/srv/c.json", std::string(R"([{"subsystems": [{"nqn": ")") + kSubnqn + port);
  ASSERT_TRUE(run_discover(env.ctx, args).ok());
  ASSERT_EQ(env.fabrics.written.size(), 1u);
  EXPECT_NE(env.fabrics.written[0].find(",host_traddr=192.168.50.1,"), std::string::npos)
      << env.fabrics.written[0];
  EXPECT_NE(env.fabrics.written[0].find(",tos=96"), std::string::npos);
  args.config_json = "none";
  ASSERT_TRUE(run_discover(env.ctx, args).ok());
  EXPECT_EQ(env.fabrics.written[1].find("tos="), std::string::npos) << env.fabrics.written[1];
  args.config_json = "/srv/c.json";  // a port of an NVM subsystem is not this controller
  ASSERT_TRUE(run_discover(env.ctx, args).ok());
  EXPECT_EQ(env.fabrics.written[2].find("tos="), std::string::npos) << env.fabrics.written[2];
}

// nvme-cli takes the discovery controller as nvme6 or /dev/nvme6 (the log was read from
// /dev//dev/nvme6).
TEST_F(DiscoverTest, ExistingDeviceAsDevPath) {
  args.device = "/dev/nvme6";
  ASSERT_TRUE(run_discover(env.ctx, args).ok());
  EXPECT_EQ(env.dlog.reads, std::vector<std::string>{"nvme6"});
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_TRUE(env.fs.writes.empty());
  EXPECT_NE(env.out.str().find(kSubnqn), std::string::npos);
}

// What is not a controller's name is a usage error before anything is read or connected.
TEST_F(DiscoverTest, DeviceThatIsNotAControllerIsAUsageError) {
  for (const char* bad : {"nvme6n1", "/dev/nvme6n1", "../x", "/dev/../nvme6", "/dev//dev/nvme6"}) {
    args.device = bad;
    auto st = run_discover(env.ctx, args);
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_EQ(st.error().code, ErrorCode::kUsage) << bad;
    EXPECT_EQ(st.error().message, fmt::format("'{}' is not a controller name", bad));
  }
  EXPECT_TRUE(env.dlog.reads.empty());
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_TRUE(env.fs.writes.empty());
}

// A hostile target's subsystem NQN that is not UTF-8 still gives a JSON document (U+FFFD for
// each bad byte); the strict dump() threw type_error 316 out of the command.
TEST_F(DiscoverTest, JsonWithAnNqnThatIsNotUtf8) {
  env.json();
  env.dlog.pages["nvme6"] = make_discovery_log({{"nqn.\xff\xfe", "192.168.50.10", "4420"}});
  Status st = Ok{};
  ASSERT_NO_THROW(st = run_discover(env.ctx, args));
  ASSERT_TRUE(st.ok());
  const auto j = nlohmann::json::parse(env.out.str());
  EXPECT_EQ(j["entries"][0]["subnqn"], "nqn.\xef\xbf\xbd\xef\xbf\xbd");
}

TEST_F(DiscoverTest, DryRunPrintsOptionString) {
  env.ctx.dry_run = true;
  ASSERT_TRUE(run_discover(env.ctx, args).ok());
  EXPECT_TRUE(env.dlog.reads.empty());
  EXPECT_EQ(env.out.str().rfind("transport=rdma,traddr=192.168.50.10,trsvcid=4420,nqn=nqn.2014-08.org.nvmexpress.discovery", 0), 0u);
}

TEST_F(DiscoverTest, LogReadFailureStillDeletesController) {
  env.dlog.pages.clear();
  EXPECT_FALSE(run_discover(env.ctx, args).ok());
  ASSERT_EQ(env.fs.writes.size(), 1u);
}

}  // namespace
}  // namespace rnvme
