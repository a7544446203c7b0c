#include <gtest/gtest.h>

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

}  // namespace
}  // namespace rnvme
