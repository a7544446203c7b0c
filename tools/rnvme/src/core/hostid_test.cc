#include "core/hostid.h"

#include <gtest/gtest.h>

namespace rnvme {
namespace {

constexpr const char* kUuid = "6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
constexpr const char* kNqn = "nqn.2014-08.org.nvmexpress:uuid:6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";

TEST(HostId, NqnValidity) {
  EXPECT_TRUE(is_valid_nqn(kNqn));
  EXPECT_TRUE(is_valid_nqn("nqn.2024-01.io.rnvme:host-1"));
  EXPECT_FALSE(is_valid_nqn(""));
  EXPECT_FALSE(is_valid_nqn("nqn."));
  EXPECT_FALSE(is_valid_nqn("iqn.2024-01.io.rnvme:h"));
  EXPECT_FALSE(is_valid_nqn("nqn.2024-01.io.rnvme:h 1"));
  EXPECT_FALSE(is_valid_nqn("nqn.2024-01.io.rnvme:h,1"));
  EXPECT_TRUE(is_valid_nqn("nqn." + std::string(219, 'x')));   // 223 bytes
  EXPECT_FALSE(is_valid_nqn("nqn." + std::string(220, 'x')));  // 224 bytes
}

TEST(HostId, UuidFromHostnqn) {
  EXPECT_EQ(uuid_from_hostnqn(kNqn), kUuid);
  EXPECT_EQ(uuid_from_hostnqn("nqn.2014-08.org.nvmexpress:uuid:6B3A2F4E-1C2D-4E5F-8A9B-0C1D2E3F4A5B"),
            kUuid);
  EXPECT_EQ(uuid_from_hostnqn("nqn.2024-01.io.rnvme:host-1"), std::nullopt);
  EXPECT_EQ(uuid_from_hostnqn("nqn.2014-08.org.nvmexpress:uuid:1234"), std::nullopt);
}

TEST(HostId, FormatUuidV4SetsVersionAndVariant) {
  std::array<uint8_t, 16> ff;
  ff.fill(0xff);
  std::string u = format_uuid_v4(ff);
  EXPECT_EQ(u, "ffffffff-ffff-4fff-bfff-ffffffffffff");
  EXPECT_TRUE(is_valid_uuid(u));
  std::array<uint8_t, 16> zero{};
  EXPECT_EQ(format_uuid_v4(zero), "00000000-0000-4000-8000-000000000000");
}

TEST(HostId, ConsistentPairIsOk) {
  HostIdentityInput in{std::string(kNqn) + "\n", std::string(kUuid) + "\n"};
  HostCheck hc = check_host_identity(in);
  EXPECT_TRUE(hc.ok());
  EXPECT_TRUE(hc.problems.empty());
  EXPECT_EQ(hc.hostnqn, kNqn);
  EXPECT_EQ(hc.hostid, kUuid);
}

TEST(HostId, MismatchBlamesHostidFileAndNamesTheRightValue) {
  HostIdentityInput in{std::string(kNqn), std::string("11111111-2222-4333-8444-555555555555")};
  HostCheck hc = check_host_identity(in);
  EXPECT_FALSE(hc.ok());
  ASSERT_EQ(hc.problems.size(), 1u);
  EXPECT_EQ(hc.problems[0].kind, HostProblem::kMismatch);
  EXPECT_EQ(hc.problems[0].source, "/etc/nvme/hostid");
  EXPECT_NE(hc.problems[0].fix.find(std::string("write ") + kUuid), std::string::npos);
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
