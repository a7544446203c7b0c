#include <gtest/gtest.h>

#include <cerrno>

#include "cmd/commands.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;

class DisconnectTest : public ::testing::Test {
 protected:
  void SetUp() override { add_sample_controllers(env.fs); }
  std::vector<std::string> deleted() { return deleted_paths(env.fs); }
  TestEnv env;
};

TEST_F(DisconnectTest, ByNqnDeletesEveryPath) {
  ASSERT_TRUE(run_disconnect(env.ctx, {kSubnqn, ""}).ok());
  EXPECT_EQ(deleted(), (std::vector<std::string>{"/sys/class/nvme/nvme0/delete_controller",
                                                  "/sys/class/nvme/nvme1/delete_controller"}));
  EXPECT_EQ(env.out.str(), std::string("disconnected nvme0\ndisconnected nvme1\nNQN:") + kSubnqn +
                               " disconnected 2 controller(s)\n");
}

// nvme-cli 2.4 (fabrics.c, nvmf_disconnect): an NQN no controller serves is not an error; it
// prints "NQN:<nqn> disconnected 0 controller(s)" and exits 0, and so does rnvme (scripts run
// `disconnect -n` to make sure a subsystem is gone).
TEST_F(DisconnectTest, ByNqnNothingConnectedIsSuccessAsInNvmeCli) {
  auto st = run_disconnect(env.ctx, {"nqn.2024-01.io.rnvme:none", ""});
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_TRUE(deleted().empty());
  EXPECT_EQ(env.out.str(), "NQN:nqn.2024-01.io.rnvme:none disconnected 0 controller(s)\n");
  env.out.str("");
  env.json();
  ASSERT_TRUE(run_disconnect(env.ctx, {"nqn.2024-01.io.rnvme:none", ""}).ok());
  auto j = nlohmann::json::parse(env.out.str());
  EXPECT_TRUE(j["devices"].empty());
  EXPECT_EQ(j["nqn"], "nqn.2024-01.io.rnvme:none");
}

// nvme-cli's -n takes NQNs separated by commas.
TEST_F(DisconnectTest, ByNqnListSeparatedByCommas) {
  const std::string list = std::string("nqn.2024-01.io.rnvme:none,") + kSubnqn + ",";
  ASSERT_TRUE(run_disconnect(env.ctx, {list, ""}).ok());
  EXPECT_EQ(deleted(), (std::vector<std::string>{"/sys/class/nvme/nvme0/delete_controller",
                                                  "/sys/class/nvme/nvme1/delete_controller"}));
  EXPECT_NE(env.out.str().find("NQN:" + list + " disconnected 2 controller(s)"), std::string::npos);
}

TEST_F(DisconnectTest, ByDevicePath) {
  ASSERT_TRUE(run_disconnect(env.ctx, {"", "/dev/nvme2"}).ok());
  EXPECT_EQ(deleted(), std::vector<std::string>{"/sys/class/nvme/nvme2/delete_controller"});
}

TEST_F(DisconnectTest, Errors) {
  EXPECT_EQ(run_disconnect(env.ctx, {"", ""}).error().code, ErrorCode::kUsage);
  EXPECT_EQ(run_disconnect(env.ctx, {kSubnqn, "nvme0"}).error().code, ErrorCode::kUsage);
  EXPECT_EQ(run_disconnect(env.ctx, {"", "nvme0n1"}).error().code, ErrorCode::kUsage);
  EXPECT_EQ(run_disconnect(env.ctx, {"", "/dev/nvme0n1"}).error().code, ErrorCode::kUsage);
  EXPECT_EQ(run_disconnect(env.ctx, {"", "../nvme2"}).error().code, ErrorCode::kUsage);
  EXPECT_EQ(run_disconnect(env.ctx, {"", "nvme2\n"}).error().code, ErrorCode::kUsage);
  EXPECT_EQ(run_disconnect(env.ctx, {"", "nvme9"}).error().code, ErrorCode::kNotFound);
  env.fs.write_errors["/sys/class/nvme/nvme2/delete_controller"] = EACCES;
  auto st = run_disconnect(env.ctx, {"", "nvme2"});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kEnvironment);
  EXPECT_TRUE(deleted().empty());
}

TEST_F(DisconnectTest, DryRunDeletesNothing) {
  env.ctx.dry_run = true;
  ASSERT_TRUE(run_disconnect(env.ctx, {kSubnqn, ""}).ok());
  EXPECT_TRUE(deleted().empty());
  EXPECT_EQ(env.out.str(), "would disconnect nvme0\nwould disconnect nvme1\n");
}

}  // namespace
}  // namespace rnvme
