#include "sys/lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace rnvme {
namespace {

std::string temp_dir() {
  char tmpl[] = "/tmp/rnvme-lock-XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  return d ? d : "";
}

TEST(FileLock, SecondHolderWaitsAndTimesOut) {
  const std::string dir = temp_dir();
  ASSERT_FALSE(dir.empty());
  const std::string path = dir + "/sub/connect-all.lock";  // the directory is created
  auto a = FileLock::acquire(path, std::chrono::milliseconds(0));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_TRUE(a->held());
  const auto t0 = std::chrono::steady_clock::now();
  auto b = FileLock::acquire(path, std::chrono::milliseconds(300));
  const auto waited = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("still holds"), std::string::npos) << b.error().message;
  EXPECT_GE(waited, std::chrono::milliseconds(300));
  {
    FileLock released = std::move(*a);  // the lock moves with the object ...
    EXPECT_TRUE(released.held());
  }  // ... and goes with it
  auto c = FileLock::acquire(path, std::chrono::milliseconds(0));
  EXPECT_TRUE(c) << c.error().message;
  ::unlink(path.c_str());
  ::rmdir((dir + "/sub").c_str());
  ::rmdir(dir.c_str());
}

TEST(FileLock, UnwritablePlaceIsAnError) {
  auto r = FileLock::acquire("/proc/rnvme-no/connect-all.lock", std::chrono::milliseconds(0));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/proc/rnvme-no"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace rnvme
