#include "sys/fs.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>

namespace rnvme {
namespace {

TEST(FakeFs, ListAndExistsDeriveDirectories) {
  FakeFileSystem fs;
  fs.add("/sys/class/nvme/nvme0/state", "live\n");
  fs.add("/sys/class/nvme/nvme1/state", "connecting\n");
  fs.add_dir("/sys/module/rnvme");
  auto l = fs.list("/sys/class/nvme");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*l, (std::vector<std::string>{"nvme0", "nvme1"}));
  EXPECT_TRUE(fs.exists("/sys/class/nvme/nvme0"));
  EXPECT_TRUE(fs.exists("/sys/module/rnvme"));
  EXPECT_FALSE(fs.exists("/sys/class/nvme/nvme2"));
  EXPECT_FALSE(fs.exists("/sys/class/nvme/nvme"));  // a prefix is not a directory
  EXPECT_FALSE(fs.list("/nope").ok());
  EXPECT_EQ(fs.read("/nope").error().code, ErrorCode::kNotFound);
}

TEST(FakeFs, WritesAreRecordedAndCanFail) {
  FakeFileSystem fs;
  fs.write_errors["/sys/class/nvme/nvme0/delete_controller"] = EACCES;
  EXPECT_FALSE(fs.write("/sys/class/nvme/nvme0/delete_controller", "1").ok());
  EXPECT_TRUE(fs.write("/etc/nvme/hostid", "x\n").ok());
  ASSERT_EQ(fs.writes.size(), 1u);
  EXPECT_EQ(*fs.read("/etc/nvme/hostid"), "x\n");
}

TEST(RealFs, ReadWriteListBelowRoot) {
  char tmpl[] = "/tmp/rnvme-fs-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  std::filesystem::create_directories(root + "/etc/nvme");
  RealFileSystem fs(root);
  ASSERT_TRUE(fs.write("/etc/nvme/hostnqn", "nqn.2024-01.io.rnvme:h\n").ok());
  EXPECT_EQ(*fs.read("/etc/nvme/hostnqn"), "nqn.2024-01.io.rnvme:h\n");
  EXPECT_TRUE(fs.exists("/etc/nvme/hostnqn"));
  EXPECT_EQ(*fs.list("/etc/nvme"), std::vector<std::string>{"hostnqn"});
  auto missing = fs.read("/etc/nvme/hostid");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().sys_errno, ENOENT);
  EXPECT_FALSE(fs.write("/no/such/dir/file", "x").ok());
  std::filesystem::remove_all(root);
}

// `rnvme hostnqn generate` on a host without /etc/nvme: the directory is made, both files
// replaced, no temporary left; a file that cannot be staged changes neither.
TEST(RealFs, ReplaceFilesMakesTheDirectoryAndIsAllOrNothing) {
  char tmpl[] = "/tmp/rnvme-fs-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  RealFileSystem fs(root);
  ASSERT_TRUE(fs.replace_files({{"/etc/nvme/hostnqn", "a\n"}, {"/etc/nvme/hostid", "b\n"}}).ok());
  EXPECT_EQ(*fs.read("/etc/nvme/hostnqn"), "a\n");
  EXPECT_EQ(*fs.read("/etc/nvme/hostid"), "b\n");
  EXPECT_EQ(*fs.list("/etc/nvme"), (std::vector<std::string>{"hostid", "hostnqn"}));
  // the second file's directory cannot be made (a file is in the way): nothing changes
  ASSERT_TRUE(fs.write("/etc/blocker", "x").ok());
  EXPECT_FALSE(fs.replace_files({{"/etc/nvme/hostnqn", "c\n"}, {"/etc/blocker/hostid", "d\n"}}).ok());
  EXPECT_EQ(*fs.read("/etc/nvme/hostnqn"), "a\n");
  EXPECT_EQ(*fs.list("/etc/nvme"), (std::vector<std::string>{"hostid", "hostnqn"}));
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace rnvme
