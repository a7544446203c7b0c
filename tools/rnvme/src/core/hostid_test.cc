#include "core/hostid.h"

#include <gtest/gtest.h>

namespace rnvme {
namespace {

constexpr const char* kUuid = "6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
constexpr const char* kNqn = "nqn.2014-08.org.nvmexpress:uuid:6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";

// What nvmf_parse_options accepts, no more and no less: testnqn and friends connect.
TEST(HostId, NqnValidityIsTheKernels) {
  EXPECT_TRUE(is_valid_nqn(kNqn));
  EXPECT_TRUE(is_valid_nqn("nqn.2024-01.io.rnvme:host-1"));
  EXPECT_TRUE(is_valid_nqn("testnqn"));
  EXPECT_TRUE(is_valid_nqn("nqn."));
  EXPECT_TRUE(is_valid_nqn("iqn.2024-01.io.rnvme:h"));
  EXPECT_TRUE(is_valid_nqn("nqn.2024-01.io.rnvme:h 1"));
  EXPECT_FALSE(is_valid_nqn(""));
  EXPECT_FALSE(is_valid_nqn("nqn.2024-01.io.rnvme:h,1"));     // would split the option string
  EXPECT_FALSE(is_valid_nqn("nqn.2024-01.io.rnvme:h\n1"));
  EXPECT_FALSE(is_valid_nqn(std::string("nqn.x\0y", 7)));
  EXPECT_TRUE(is_valid_nqn("nqn." + std::string(218, 'x')));   // 222 bytes: < NVMF_NQN_SIZE
  EXPECT_FALSE(is_valid_nqn("nqn." + std::string(219, 'x')));  // 223 bytes: the kernel refuses
}

TEST(HostId, NqnRefusalSaysWhy) {
  EXPECT_EQ(nqn_refusal("testnqn"), std::nullopt);
  EXPECT_NE(nqn_refusal("")->find("empty"), std::string::npos);
  EXPECT_NE(nqn_refusal("a,b")->find("comma"), std::string::npos);
  EXPECT_NE(nqn_refusal("a\nb")->find("newline"), std::string::npos);
  EXPECT_NE(nqn_refusal(std::string("a\0b", 3))->find("NUL"), std::string::npos);
  auto long_one = nqn_refusal(std::string(223, 'x'));
  ASSERT_TRUE(long_one);
  EXPECT_NE(long_one->find("223 bytes long; the kernel takes at most 222"), std::string::npos)
      << *long_one;
}

TEST(HostId, NqnOddityWarnsOnlyOffTheNvmeForm) {
  for (const char* in_form :
       {kNqn, "nqn.2024-01.io.rnvme:host-1", "nqn.2014-08.org.nvmexpress.discovery",
        "nqn.2014-08.org.nvmexpress.rnvme:test1", "nqn.1992-05.com.example:storage:disk.1",
        "nqn.2024-12.io.rnvme:\xc3\xa9t\xc3\xa9"})  // UTF-8 is allowed
    EXPECT_EQ(nqn_oddity(in_form), std::nullopt) << in_form;
  ASSERT_TRUE(nqn_oddity("testnqn"));
  EXPECT_NE(nqn_oddity("testnqn")->find("'testnqn' is not in the NVMe form"), std::string::npos);
  EXPECT_NE(nqn_oddity("testnqn")->find("the kernel accepts it"), std::string::npos);
  for (const char* off_form :
       {"nqn.", "nqn.x", "nqn.2024-01", "nqn.2024-01.io.rnvme", "nqn.2024-01.io.rnvme:",
        "nqn.2024-13.io.rnvme:t", "nqn.2024-00.io.rnvme:t", "nqn.24-01.io.rnvme:t",
        "nqn.2024-01.:t", "nqn.2024-01.io..rnvme:t", "nqn.2024-01.io_rnvme:t",
        "iqn.2024-01.io.rnvme:t", "NQN.2024-01.io.rnvme:t", "nqn.2024-01.io.rnvme:h 1",
        "nqn.2024-01.io.rnvme:h\t1", "nqn.2014-08.org.nvmexpress.discovery2",
        "nqn.2014-08.org.nvmexpress:uuid:1234"})
    EXPECT_TRUE(nqn_oddity(off_form)) << off_form;
  EXPECT_NE(nqn_oddity("nqn.2014-08.org.nvmexpress:uuid:1234")->find("no UUID"), std::string::npos);
  EXPECT_NE(nqn_oddity("nqn.2024-01.io.rnvme:h 1")->find("spaces"), std::string::npos);
}

TEST(HostId, ConflictIsTheKernelsRuleAcrossControllers) {
  const std::string other = "11111111-2222-4333-8444-555555555555";
  std::vector<HostInUse> none;
  EXPECT_EQ(find_host_conflict(kNqn, kUuid, none), std::nullopt);
  // the same pair again, and unrelated pairs, are fine
  std::vector<HostInUse> same{{"nvme0", std::string(kNqn) + "\n", std::string(kUuid) + "\n"},
                              {"nvme1", "nqn.2024-01.io.rnvme:other", other}};
  EXPECT_EQ(find_host_conflict(kNqn, kUuid, same), std::nullopt);
  // Debian's default pair (an unrelated hostid) is no conflict by itself
  EXPECT_EQ(find_host_conflict(kNqn, other, std::vector<HostInUse>{}), std::nullopt);
  // one NQN, two IDs
  std::vector<HostInUse> nqn_used{{"nvme3", kNqn, other}};
  auto p = find_host_conflict(kNqn, kUuid, nqn_used);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->fatal);
  EXPECT_EQ(p->kind, HostProblem::kInUse);
  EXPECT_NE(p->problem.find("nvme3 already uses host NQN"), std::string::npos) << p->problem;
  EXPECT_NE(p->fix.find("--hostid=" + other), std::string::npos) << p->fix;
  EXPECT_EQ(p->source, "--hostid");
  EXPECT_NE(p->problem.find(std::string("with host ID ") + other + ", and this connect would use "
                            "host ID " + kUuid),
            std::string::npos)
      << p->problem;
  // 6.12 refuses; 6.1 would re-identify the controllers that share the host NQN
  EXPECT_NE(p->problem.find("Linux 6.12 refuses"), std::string::npos);
  EXPECT_NE(p->problem.find("6.1 accepts it but gives nvme3"), std::string::npos);
  // one ID, two NQNs (IDs compare case-insensitively)
  std::vector<HostInUse> id_used{{"nvme4", "nqn.2024-01.io.rnvme:other", "6B3A2F4E-1C2D-4E5F-8A9B-0C1D2E3F4A5B"}};
  p = find_host_conflict(kNqn, kUuid, id_used);
  ASSERT_TRUE(p);
  EXPECT_NE(p->problem.find("nvme4 already uses host ID"), std::string::npos) << p->problem;
  EXPECT_NE(p->fix.find("--hostnqn=nqn.2024-01.io.rnvme:other"), std::string::npos) << p->fix;
  EXPECT_EQ(p->source, "--hostnqn");
  // the same pair elsewhere does not hide a conflict on another controller
  std::vector<HostInUse> mixed{{"nvme0", kNqn, kUuid}, {"nvme4", "nqn.2024-01.io.rnvme:other", kUuid}};
  p = find_host_conflict(kNqn, kUuid, mixed);
  ASSERT_TRUE(p);
  EXPECT_NE(p->problem.find("nvme4"), std::string::npos);
  // unknown values (the kernel's default host) match nothing
  EXPECT_EQ(find_host_conflict("", "", nqn_used), std::nullopt);
  EXPECT_EQ(find_host_conflict(kNqn, "", nqn_used), std::nullopt);
}

TEST(HostId, UuidFromHostnqn) {
  EXPECT_EQ(uuid_from_hostnqn(kNqn), kUuid);
  EXPECT_EQ(uuid_from_hostnqn("nqn.2014-08.org.nvmexpress:uuid:6B3A2F4E-1C2D-4E5F-8A9B-0C1D2E3F4A5B"),
            kUuid);
  EXPECT_EQ(uuid_from_hostnqn("nqn.2024-01.io.rnvme:host-1"), std::nullopt);
  EXPECT_EQ(uuid_from_hostnqn("nqn.2014-08.org.nvmexpress:uuid:1234"), std::nullopt);
}

TEST(HostId, GeneratedHostnqnProblem) {
  EXPECT_EQ(generated_hostnqn_problem(kNqn), std::nullopt);
  // DMI reports upper case on some firmware: the UUID is what counts
  EXPECT_EQ(generated_hostnqn_problem(
                "nqn.2014-08.org.nvmexpress:uuid:6B3A2F4E-1C2D-4E5F-8A9B-0C1D2E3F4A5B"),
            std::nullopt);
  auto nil = generated_hostnqn_problem(
      "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000000");
  ASSERT_TRUE(nil);
  EXPECT_NE(nil->find("placeholder"), std::string::npos) << *nil;
  EXPECT_TRUE(generated_hostnqn_problem(
      "nqn.2014-08.org.nvmexpress:uuid:FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"));
  EXPECT_TRUE(generated_hostnqn_problem("nqn.2024-01.io.rnvme:host-1"));
  EXPECT_TRUE(generated_hostnqn_problem(""));
}

TEST(HostId, ConsistentPairIsOk) {
  HostIdentityInput in{std::string(kNqn) + "\n", std::string(kUuid) + "\n"};
  HostCheck hc = check_host_identity(in);
  EXPECT_TRUE(hc.ok());
  EXPECT_TRUE(hc.problems.empty());
  EXPECT_EQ(hc.hostnqn, kNqn);
  EXPECT_EQ(hc.hostid, kUuid);
}

// Debian's nvme-cli writes an unrelated hostid: a note, never a refusal (no kernel rule).
TEST(HostId, UnrelatedHostidIsANoteThatNamesTheMatchingValue) {
  HostIdentityInput in{std::string(kNqn), std::string("11111111-2222-4333-8444-555555555555")};
  HostCheck hc = check_host_identity(in);
  EXPECT_TRUE(hc.ok());
  ASSERT_EQ(hc.problems.size(), 1u);
  EXPECT_FALSE(hc.problems[0].fatal);
  EXPECT_EQ(hc.problems[0].kind, HostProblem::kMismatch);
  EXPECT_EQ(hc.problems[0].source, "/etc/nvme/hostid");
  EXPECT_NE(hc.problems[0].fix.find(std::string("write ") + kUuid), std::string::npos);
}

// nvme-cli's rule, and what keeps Linux 6.12 from pairing the host NQN with its default host ID.
TEST(HostId, MissingHostidIsTheUuidInTheHostnqn) {
  HostCheck hc = check_host_identity({std::string(kNqn) + "\n", std::nullopt});
  EXPECT_TRUE(hc.ok());
  EXPECT_EQ(hc.hostid, kUuid);
  EXPECT_EQ(hc.hostid_source, "the UUID in /etc/nvme/hostnqn");
  ASSERT_EQ(hc.problems.size(), 1u);
  EXPECT_EQ(hc.problems[0].kind, HostProblem::kMissing);
  EXPECT_FALSE(hc.problems[0].fatal);
  EXPECT_EQ(hc.problems[0].source, "/etc/nvme/hostid");
}

TEST(HostId, OneHalfWithoutTheOtherIsAWarningAbout612) {
  HostCheck nqn_only = check_host_identity({std::string("nqn.2024-01.io.rnvme:host-1"), std::nullopt});
  EXPECT_TRUE(nqn_only.ok());
  EXPECT_TRUE(nqn_only.hostid.empty());
  ASSERT_EQ(nqn_only.problems.size(), 1u);
  EXPECT_EQ(nqn_only.problems[0].kind, HostProblem::kUnpaired);
  EXPECT_FALSE(nqn_only.problems[0].fatal);
  EXPECT_NE(nqn_only.problems[0].problem.find("Linux 6.12"), std::string::npos);
  EXPECT_NE(nqn_only.problems[0].fix.find("--hostid"), std::string::npos);

  HostCheck id_only = check_host_identity({std::nullopt, std::string(kUuid)});
  ASSERT_EQ(id_only.problems.size(), 2u);
  EXPECT_EQ(id_only.problems[0].kind, HostProblem::kMissing);  // `hostnqn check` still fails
  EXPECT_EQ(id_only.problems[1].kind, HostProblem::kUnpaired);
  EXPECT_FALSE(id_only.problems[1].fatal);
  EXPECT_NE(id_only.problems[1].problem.find("default host's NQN"), std::string::npos);
}

TEST(HostId, NonUuidHostnqnCannotMismatch) {
  HostIdentityInput in{std::string("nqn.2024-01.io.rnvme:host-1"),
                       std::string("11111111-2222-4333-8444-555555555555")};
  EXPECT_TRUE(check_host_identity(in).ok());
}

TEST(HostId, MissingAndBlankFiles) {
  HostIdentityInput missing{std::nullopt, std::nullopt};
  HostCheck hc = check_host_identity(missing);
  EXPECT_FALSE(hc.ok());
  ASSERT_EQ(hc.problems.size(), 2u);
  EXPECT_EQ(hc.problems[0].kind, HostProblem::kMissing);
  EXPECT_TRUE(hc.problems[0].fatal);
  EXPECT_FALSE(hc.problems[1].fatal);  // missing hostid is only a warning

  HostIdentityInput blank{std::string("\n"), std::string(kUuid)};
  HostCheck hb = check_host_identity(blank);
  ASSERT_FALSE(hb.problems.empty());
  EXPECT_EQ(hb.problems[0].kind, HostProblem::kEmpty);
  EXPECT_EQ(hb.problems[0].source, "/etc/nvme/hostnqn");
}

// nvme-cli's stand-in for a missing or blank host NQN file: the generated host NQN, a warning
// (not fatal), its UUID as the host ID when there is no hostid file.
TEST(HostId, GeneratedHostnqnStandsInForAMissingOrBlankFile) {
  const std::string gen = std::string(kUuidNqnPrefix) + kUuid;
  for (std::optional<std::string> file :
       {std::optional<std::string>(), std::optional<std::string>("\n"),
        std::optional<std::string>("  \t\n")}) {
    HostIdentityInput in{file, std::nullopt};
    in.generated_hostnqn = gen;
    HostCheck hc = check_host_identity(in);
    EXPECT_TRUE(hc.ok());
    EXPECT_EQ(hc.hostnqn, gen);
    EXPECT_EQ(hc.hostid, kUuid);
    ASSERT_FALSE(hc.problems.empty());
    EXPECT_EQ(hc.problems[0].kind, HostProblem::kGenerated);
    EXPECT_EQ(hc.problems[0].source, "/etc/nvme/hostnqn");
    EXPECT_FALSE(hc.problems[0].fatal);
    EXPECT_NE(hc.problems[0].problem.find(file ? "empty; using " + gen : "missing; using " + gen),
              std::string::npos)
        << hc.problems[0].problem;
    EXPECT_NE(hc.hostnqn_source.find("generated"), std::string::npos);
  }
  // a file with a host NQN in it is used, whatever was generated
  HostIdentityInput in{std::string(kNqn) + "\n", std::string(kUuid)};
  in.generated_hostnqn = gen;
  EXPECT_EQ(check_host_identity(in).hostnqn, kNqn);
  // a hostid file beside the stand-in is no unpaired half
  HostIdentityInput with_id{std::nullopt, std::string("11111111-2222-4333-8444-555555555555")};
  with_id.generated_hostnqn = gen;
  for (const auto& p : check_host_identity(with_id).problems)
    EXPECT_NE(p.kind, HostProblem::kUnpaired) << p.problem;
  // none to stand in: an empty file is an error that says why
  HostIdentityInput blank{std::string(""), std::nullopt};
  blank.generated_problem = "its UUID is a placeholder";
  HostCheck hb = check_host_identity(blank);
  EXPECT_FALSE(hb.ok());
  EXPECT_EQ(hb.problems[0].problem,
            "empty, and libnvme's generated host NQN cannot stand in: its UUID is a placeholder");
}

TEST(HostId, GarbageHostid) {
  HostIdentityInput in{std::string(kNqn), std::string("abc")};
  HostCheck hc = check_host_identity(in);
  ASSERT_EQ(hc.problems.size(), 1u);
  EXPECT_EQ(hc.problems[0].kind, HostProblem::kInvalid);
  EXPECT_EQ(hc.problems[0].source, "/etc/nvme/hostid");
}

TEST(HostId, Trim) {
  EXPECT_EQ(trim("  a b \r\n"), "a b");
  EXPECT_EQ(trim("\n"), "");
}

}  // namespace
}  // namespace rnvme
