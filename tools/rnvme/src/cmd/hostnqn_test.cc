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

// nvme-cli 2.4's show-hostnqn: the file's host NQN, else nvmf_hostnqn_generate()'s.  So `hostnqn
// show` for a missing or blank file: the generated one, named as such, with a warning and the fix.
TEST(Hostnqn, ShowFallsBackToTheGeneratedHostnqnAsNvmeCli) {
  const std::string gen = "nqn.2014-08.org.nvmexpress:uuid:00112233-4455-4677-8899-aabbccddeeff";
  for (bool blank : {false, true}) {
    TestEnv env;
    if (blank) env.fs.add("/etc/nvme/hostnqn", "\n");
    ASSERT_TRUE(run_hostnqn(env.ctx, {"show", false}).ok());
    const std::string out = env.out.str();
    EXPECT_EQ(out.rfind("hostnqn: " + gen + "  (generated from the DMI product UUID; "
                            "/etc/nvme/hostnqn is " + (blank ? "empty" : "missing") + ")\n", 0),
              0u)
        << out;
    EXPECT_NE(out.find("warning: /etc/nvme/hostnqn: "), std::string::npos) << out;
    EXPECT_NE(out.find("fix: write the host NQN to the file"), std::string::npos) << out;
    EXPECT_EQ(env.generate_calls, 1);
    EXPECT_TRUE(run_hostnqn(env.ctx, {"check", false}).ok());  // a warning, not a failure
  }
}

// `rnvme hostnqn generate > /etc/nvme/hostnqn`, nvme-cli's habit with gen-hostnqn: the shell
// empties the file before rnvme reads it.  An empty (or blank) file is no identity to protect:
// generate writes the host NQN without --force and keeps the host ID that is there.
TEST(Hostnqn, GenerateFillsABlankHostnqnFileAndKeepsTheHostid) {
  TestEnv env;
  const std::string id = "11111111-2222-4333-8444-555555555555";
  env.fs.add("/etc/nvme/hostnqn", "");
  env.fs.add("/etc/nvme/hostid", id + "\n");
  auto st = run_hostnqn(env.ctx, {"generate", false});
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(*env.fs.read("/etc/nvme/hostnqn"),
            "nqn.2014-08.org.nvmexpress:uuid:00112233-4455-4677-8899-aabbccddeeff\n");
  EXPECT_EQ(*env.fs.read("/etc/nvme/hostid"), id + "\n");

  // a random one (no DMI product UUID) is written too: once written it stays
  TestEnv random;
  random.generated_stable = false;
  random.fs.add("/etc/nvme/hostnqn", "");
  ASSERT_TRUE(run_hostnqn(random.ctx, {"generate", false}).ok());
  EXPECT_EQ(*random.fs.read("/etc/nvme/hostnqn"),
            "nqn.2014-08.org.nvmexpress:uuid:00112233-4455-4677-8899-aabbccddeeff\n");

  // both blank: a fresh pair
  TestEnv both;
  both.fs.add("/etc/nvme/hostnqn", " \n");
  both.fs.add("/etc/nvme/hostid", "");
  ASSERT_TRUE(run_hostnqn(both.ctx, {"generate", false}).ok());
  EXPECT_EQ(*both.fs.read("/etc/nvme/hostid"), "00112233-4455-4677-8899-aabbccddeeff\n");

  // a host NQN with a UUID and no host ID: the ID is filled in, the NQN kept
  TestEnv half;
  half.fs.add("/etc/nvme/hostnqn", std::string(kHostnqn) + "\n");
  ASSERT_TRUE(run_hostnqn(half.ctx, {"generate", false}).ok());
  EXPECT_EQ(*half.fs.read("/etc/nvme/hostid"), std::string(kHostUuid) + "\n");
  EXPECT_EQ(half.generate_calls, 0);

  // a half rnvme would have to keep but cannot use: --force, said so
  TestEnv bad;
  bad.fs.add("/etc/nvme/hostnqn", "");
  bad.fs.add("/etc/nvme/hostid", "not-a-uuid\n");
  st = run_hostnqn(bad.ctx, {"generate", false});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().fix.find("--force"), std::string::npos);
  EXPECT_TRUE(bad.fs.writes.empty());
  TestEnv odd;
  odd.fs.add("/etc/nvme/hostnqn", "nqn.2014-08.org.example:host1\n");
  st = run_hostnqn(odd.ctx, {"generate", false});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().fix.find("--force"), std::string::npos);
  EXPECT_TRUE(odd.fs.writes.empty());
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
