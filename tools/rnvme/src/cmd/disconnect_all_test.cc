#include <gtest/gtest.h>

#include "cmd/commands.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;

class DisconnectAllTest : public ::testing::Test {
 protected:
  void SetUp() override {
    add_controller(env.fs, "nvme0", "nvme-subsys0", kSubnqn, "rdma", "192.168.50.10", "4420");
    add_controller(env.fs, "nvme1", "nvme-subsys0", kSubnqn, "rdma", "192.168.51.10", "4420");
    add_controller(env.fs, "nvme2", "nvme-subsys2", "nqn.2024-01.io.rnvme:other", "rdma", "192.168.50.10", "4420");
    add_controller(env.fs, "nvme3", "nvme-subsys3", "nqn.2014.08.org.nvmexpress:8086", "pcie", "", "");
  }
  std::vector<std::string> deleted() {
    std::vector<std::string> d;
    for (const auto& [p, v] : env.fs.writes) {
      EXPECT_EQ(v, "1");
      d.push_back(p);
    }
    return d;
  }
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

}  // namespace
}  // namespace rnvme
