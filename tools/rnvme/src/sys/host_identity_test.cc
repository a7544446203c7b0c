#include "sys/host_identity.h"

#include <gtest/gtest.h>

namespace rnvme {
namespace {

TEST(HostIdentityFiles, ReadAsTheyAreAndMissingIsNullopt) {
  FakeFileSystem fs;
  HostIdentityInput none = read_host_identity(fs);
  EXPECT_FALSE(none.hostnqn);
  EXPECT_FALSE(none.hostid);
  EXPECT_EQ(none.hostnqn_source, "/etc/nvme/hostnqn");
  EXPECT_EQ(none.hostid_source, "/etc/nvme/hostid");
  fs.add("/etc/nvme/hostnqn", "nqn.2014-08.org.example:host1\n");
  fs.add("/etc/nvme/hostid", "");
  HostIdentityInput in = read_host_identity(fs);
  EXPECT_EQ(in.hostnqn, "nqn.2014-08.org.example:host1\n");  // untrimmed: the check judges it
  EXPECT_EQ(in.hostid, "");  // empty is not missing
}

TEST(HostIdentityFiles, AGivenValueStandsForItsFile) {
  FakeFileSystem fs;
  fs.add("/etc/nvme/hostnqn", "nqn.2014-08.org.example:file\n");
  fs.add("/etc/nvme/hostid", "11111111-2222-4333-8444-555555555555\n");
  HostIdentityInput in = read_host_identity(fs, "nqn.2014-08.org.example:given");
  EXPECT_EQ(in.hostnqn, "nqn.2014-08.org.example:given");
  EXPECT_EQ(in.hostnqn_source, "--hostnqn");
  EXPECT_EQ(in.hostid, "11111111-2222-4333-8444-555555555555\n");
  EXPECT_EQ(in.hostid_source, "/etc/nvme/hostid");
  in = read_host_identity(fs, {}, "6f1f7b3a-1b1e-4c5e-9d1a-0c0ffee0d00d");
  EXPECT_EQ(in.hostid, "6f1f7b3a-1b1e-4c5e-9d1a-0c0ffee0d00d");
  EXPECT_EQ(in.hostid_source, "--hostid");
  EXPECT_EQ(in.hostnqn_source, "/etc/nvme/hostnqn");
}

}  // namespace
}  // namespace rnvme
