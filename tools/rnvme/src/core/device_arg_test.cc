#include "core/device_arg.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace rnvme {
namespace {

TEST(DeviceArg, StripDevPrefix) {
  EXPECT_EQ(strip_dev_prefix("/dev/nvme3"), "nvme3");
  EXPECT_EQ(strip_dev_prefix("nvme3"), "nvme3");
  EXPECT_EQ(strip_dev_prefix("/dev/nvme0c1n1"), "nvme0c1n1");
  EXPECT_EQ(strip_dev_prefix("/dev//dev/nvme3"), "/dev/nvme3");  // once only
  EXPECT_EQ(strip_dev_prefix("/devnvme3"), "/devnvme3");
  EXPECT_EQ(strip_dev_prefix(""), "");
}

// nvme-cli takes a controller as nvme3 or /dev/nvme3: both give nvme3.
TEST(DeviceArg, ControllerInBothSpellings) {
  ASSERT_TRUE(controller_arg("nvme3").ok());
  EXPECT_EQ(*controller_arg("nvme3"), "nvme3");
  ASSERT_TRUE(controller_arg("/dev/nvme3").ok());
  EXPECT_EQ(*controller_arg("/dev/nvme3"), "nvme3");
  EXPECT_EQ(*controller_arg("/dev/nvme123456"), "nvme123456");
}

TEST(DeviceArg, NotAControllerIsAUsageError) {
  for (const char* bad : {"", "/dev/", "nvme", "nvme3n1", "/dev/nvme3n1", "nvme0c1n1", "../x",
                          "/dev/../nvme3", "/dev//dev/nvme3", "/dev/nvme3/", "/tmp/nvme3",
                          "dev/nvme3", "nvme-fabrics", "nvme3 ", "nvme+3", "nvme1234567",
                          "NVME3"}) {
    auto r = controller_arg(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kUsage) << bad;
    EXPECT_EQ(r.error().message, fmt::format("'{}' is not a controller name", bad));
    EXPECT_FALSE(r.error().fix.empty());
  }
  // a namespace where a controller is expected says so
  EXPECT_NE(controller_arg("/dev/nvme3n1").error().cause.find("nvme3n1 is a namespace"),
            std::string::npos);
  EXPECT_TRUE(controller_arg("../x").error().cause.empty());
}

}  // namespace
}  // namespace rnvme
