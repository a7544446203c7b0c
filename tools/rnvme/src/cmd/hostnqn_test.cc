#include <gtest/gtest.h>

#include <cerrno>

#include "cmd/commands.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;

TEST(Hostnqn, GenerateWritesAConsistentPair) {
  TestEnv env;
  ASSERT_TRUE(run_hostnqn(env.ctx, {"generate", false}).ok());
  auto nqn = trim(*env.fs.read("/etc/nvme/hostnqn"));
  auto id = trim(*env.fs.read("/etc/nvme/hostid"));
  EXPECT_TRUE(is_valid_uuid(id));
  EXPECT_EQ(uuid_from_hostnqn(nqn), id);
  EXPECT_TRUE(check_host_identity({nqn, id}).ok());
}

// The pair is replaced as one: when the second file cannot be written the first keeps its old
// content (no new hostnqn beside an old hostid).
TEST(Hostnqn, GenerateFailureLeavesTheOldPair) {
  TestEnv env;
  // a hostnqn without a UUID: generate makes a new one
  env.fs.add("/etc/nvme/hostnqn", "nqn.2014-08.org.example:host1\n");
  const std::string old_nqn = *env.fs.read("/etc/nvme/hostnqn");
  env.fs.write_errors["/etc/nvme/hostid"] = ENOSPC;
  auto st = run_hostnqn(env.ctx, {"generate", true});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(*env.fs.read("/etc/nvme/hostnqn"), old_nqn);
  EXPECT_TRUE(env.fs.writes.empty());
}

TEST(Hostnqn, GenerateRefusesToOverwrite) {
  TestEnv env;
  add_host_identity(env.fs);
  auto st = run_hostnqn(env.ctx, {"generate", false});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kConfig);
  EXPECT_TRUE(env.fs.writes.empty());
}

TEST(Hostnqn, ForceKeepsTheHostnqnUuidAndRepairsHostid) {
  TestEnv env;
  add_host_identity(env.fs);
  env.fs.add("/etc/nvme/hostid", "11111111-2222-4333-8444-555555555555\n");
  ASSERT_TRUE(run_hostnqn(env.ctx, {"generate", true}).ok());
  EXPECT_EQ(*env.fs.read("/etc/nvme/hostnqn"), std::string(kHostnqn) + "\n");
  EXPECT_EQ(*env.fs.read("/etc/nvme/hostid"), std::string(kHostUuid) + "\n");
  EXPECT_EQ(env.generate_calls, 0);  // libnvme is not asked when the hostnqn has a UUID
}

// Without a UUID to keep, the host NQN is libnvme's (nvmf_hostnqn_generate: the DMI product
// UUID), written lower-case with its UUID as the host ID.
TEST(Hostnqn, GenerateTakesLibnvmesHostnqn) {
  TestEnv env;
  env.generated_hostnqn =
      std::string("nqn.2014-08.org.nvmexpress:uuid:4C4C4544-0035-3910-8047-B4C04F4E3332");
  ASSERT_TRUE(run_hostnqn(env.ctx, {"generate", false}).ok());
  EXPECT_EQ(env.generate_calls, 1);
  EXPECT_EQ(*env.fs.read("/etc/nvme/hostnqn"),
            "nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0035-3910-8047-b4c04f4e3332\n");
  EXPECT_EQ(*env.fs.read("/etc/nvme/hostid"), "4c4c4544-0035-3910-8047-b4c04f4e3332\n");
}

// rnvme's check on what libnvme hands back: a placeholder UUID other machines carry too is not
// written, and neither is anything when libnvme fails.
TEST(Hostnqn, GenerateRefusesAPlaceholderAndLibnvmeFailure) {
  TestEnv env;
  env.generated_hostnqn =
      std::string("nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000000");
  auto st = run_hostnqn(env.ctx, {"generate", false});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kConfig);
  EXPECT_NE(st.error().cause.find("placeholder"), std::string::npos) << st.error().cause;
  EXPECT_TRUE(env.fs.writes.empty());
  EXPECT_FALSE(env.fs.exists("/etc/nvme/hostnqn"));

  env.generated_hostnqn = make_error(ErrorCode::kFailure, "libnvme could not generate a host NQN");
  st = run_hostnqn(env.ctx, {"generate", false});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, "libnvme could not generate a host NQN");
  EXPECT_TRUE(env.fs.writes.empty());
}

TEST(Hostnqn, CheckPassesAnUnrelatedHostidAndFailsAnUnusableFile) {
  TestEnv env;
  add_host_identity(env.fs);
  EXPECT_TRUE(run_hostnqn(env.ctx, {"check", false}).ok());
  env.fs.add("/etc/nvme/hostid", "11111111-2222-4333-8444-555555555555\n");
  EXPECT_TRUE(run_hostnqn(env.ctx, {"check", false}).ok());
  env.fs.add("/etc/nvme/hostid", "not-a-uuid\n");
  auto st = run_hostnqn(env.ctx, {"check", false});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kConfig);
  EXPECT_EQ(st.error().message.rfind("/etc/nvme/hostid:", 0), 0u);
}

TEST(Hostnqn, ShowJson) {
  TestEnv env;
  env.json();
  add_host_identity(env.fs);
  ASSERT_TRUE(run_hostnqn(env.ctx, {"show", false}).ok());
  auto j = nlohmann::json::parse(env.out.str());
  EXPECT_EQ(j["hostnqn"], kHostnqn);
  EXPECT_EQ(j["ok"], true);
  EXPECT_TRUE(j["problems"].empty());
}

TEST(Hostnqn, DryRunGenerateWritesNothing) {
  TestEnv env;
  env.ctx.dry_run = true;
  ASSERT_TRUE(run_hostnqn(env.ctx, {"generate", false}).ok());
  EXPECT_TRUE(env.fs.writes.empty());
  EXPECT_NE(env.out.str().find("nqn.2014-08.org.nvmexpress:uuid:"), std::string::npos);
}

}  // namespace
}  // namespace rnvme
