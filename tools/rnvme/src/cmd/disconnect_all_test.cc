#include <gtest/gtest.h>

#include <cerrno>

#include "cmd/commands.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;

class DisconnectAllTest : public ::testing::Test {
 protected:
  void SetUp() override { add_sample_controllers(env.fs); }
  std::vector<std::string> deleted() { return deleted_paths(env.fs); }
  TestEnv env;
};

TEST_F(DisconnectAllTest, AllSkipsPcie) {
  env.json();
  ASSERT_TRUE(run_disconnect_all(env.ctx, {}).ok());
  EXPECT_EQ(deleted().size(), 3u);
  auto j = nlohmann::json::parse(env.out.str());
  EXPECT_EQ(j["devices"], nlohmann::json({"nvme0", "nvme1", "nvme2"}));
}

TEST_F(DisconnectAllTest, AllFiltersTransport) {
  ASSERT_TRUE(run_disconnect_all(env.ctx, {"tcp"}).ok());
  EXPECT_TRUE(deleted().empty());
}

// Without -t only RDMA controllers go: nvme-cli's TCP controllers on the same host stay; one being
// deleted already is left to it.
TEST_F(DisconnectAllTest, OnlyRdmaByDefaultAndNotDeletingOnes) {
  add_controller(env.fs, "nvme4", "nvme-subsys4", "nqn.2024-01.io.rnvme:tcp", "tcp", "192.168.60.10",
                 "4420");
  add_controller(env.fs, "nvme5", "nvme-subsys5", "nqn.2024-01.io.rnvme:gone", "rdma",
                 "192.168.50.10", "4420", "deleting");
  env.json();
  ASSERT_TRUE(run_disconnect_all(env.ctx, {}).ok());
  auto j = nlohmann::json::parse(env.out.str());
  EXPECT_EQ(j["devices"], nlohmann::json({"nvme0", "nvme1", "nvme2"}));
  EXPECT_EQ(j["skipped"][0]["device"], "nvme5");
  TestEnv env2;
  add_controller(env2.fs, "nvme4", "nvme-subsys4", "nqn.2024-01.io.rnvme:tcp", "tcp", "192.168.60.10",
                 "4420");
  ASSERT_TRUE(run_disconnect_all(env2.ctx, {"tcp"}).ok());
  EXPECT_EQ(deleted_paths(env2.fs), std::vector<std::string>{"/sys/class/nvme/nvme4/delete_controller"});
}

// A failed delete does not stop the others, and the output says which went and which did not.
TEST_F(DisconnectAllTest, GoesOnPastAFailedDelete) {
  env.json();
  env.fs.write_errors["/sys/class/nvme/nvme1/delete_controller"] = EBUSY;
  auto st = run_disconnect_all(env.ctx, {});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message.rfind("1 of 3 controllers could not be deleted; ", 0), 0u)
      << st.error().message;
  auto j = nlohmann::json::parse(env.out.str());
  EXPECT_EQ(j["devices"], nlohmann::json({"nvme0", "nvme2"}));
  EXPECT_EQ(j["failed"][0]["device"], "nvme1");
}

}  // namespace
}  // namespace rnvme
