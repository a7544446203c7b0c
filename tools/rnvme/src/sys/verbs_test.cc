#include "sys/verbs.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "sys/fabric_probe.h"

namespace rnvme {
namespace {

// The port's MTU (rdma) and the device's limits (doctor) come from one lookup by name: a name
// verbs does not know leaves both unknown.
TEST(Verbs, AnUnknownDeviceIsUnknownToBothQueries) {
  DeviceLimits l;
  l.max_qp = 7;
  EXPECT_FALSE(verbs_device_limits("rnvme-no-such-device", l));
  EXPECT_EQ(l.max_qp, 7) << "untouched";
  EXPECT_FALSE(VerbsPortQuery().active_mtu("rnvme-no-such-device", 1));
  RdmaDevice d;
  d.name = "rnvme-no-such-device";  // index -1: no netlink resource summary either
  const DeviceLimits probed = LibnlFabricProbe().device_limits(d);
  EXPECT_EQ(probed.max_qp, 0);
  EXPECT_EQ(probed.used_qp, -1);
}

// Where this machine has an RDMA device that verbs can open, its limits are read by its name.
TEST(Verbs, AKnownDeviceHasItsLimits) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/class/infiniband", ec)) {
    DeviceLimits l;
    if (!verbs_device_limits(e.path().filename().string(), l)) continue;  // no access to uverbs
    EXPECT_GT(l.max_qp, 0) << e.path();
    return;
  }
  GTEST_SKIP() << "no RDMA device verbs can open here";
}

}  // namespace
}  // namespace rnvme
