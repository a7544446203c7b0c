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
  EXPECT_EQ(env.out.str(), "disconnected nvme0\ndisconnected nvme1\n");
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
  EXPECT_EQ(run_disconnect(env.ctx, {"nqn.2024-01.io.rnvme:none", ""}).error().code, ErrorCode::kNotFound);
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
