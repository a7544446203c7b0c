#include "core/doctor.h"

#include <gtest/gtest.h>

#include "core/doctor/test_support.h"

namespace rnvme {
namespace {

using namespace doctor_test;

TEST(DoctorSnapshotJson, RoundTrips) {
  for (const char* f : {"softroce-vm.json", "mlx5-connectx5-lossless.json", "mlx5-connectx5-vlan-pcp.json",
                        "e810-irdma-dscp-partial.json", "bnxt-re-lossless.json"}) {
    auto s = fixture(f);
    auto j = snapshot_to_json(s);
    auto back = snapshot_from_json(j);
    ASSERT_TRUE(back.ok()) << f;
    EXPECT_EQ(snapshot_to_json(*back), j) << f;
  }
  auto s = softroce();
  auto back = snapshot_from_json(snapshot_to_json(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(snapshot_to_json(*back), snapshot_to_json(s));
}

TEST(DoctorSnapshotJson, BadTypesAreAnError) {
  auto r = snapshot_from_json(nlohmann::json{{"devices", {{{"name", 5}}}}});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(has(r.error().message, "bad doctor snapshot"));
  EXPECT_FALSE(snapshot_from_json(nlohmann::json::array()).ok());
}

TEST(DoctorSnapshotJson, NonIntegerPriorityKeyIsAnError) {
  for (const char* key : {"x", "99999999999", ""}) {
    nlohmann::json j{{"netdevs", {{"eth0", {{"egress_qos", {{key, 3}}}}}}}};
    Result<DoctorSnapshot> r = DoctorSnapshot{};
    EXPECT_NO_THROW(r = snapshot_from_json(j)) << key;
    ASSERT_FALSE(r.ok()) << key;
    EXPECT_TRUE(has(r.error().message, "is not an integer")) << r.error().message;
  }
  nlohmann::json ok{{"netdevs", {{"eth0", {{"ecn_np", {{"3", true}}}}}}}};
  auto r = snapshot_from_json(ok);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.value().netdevs.at("eth0").ecn_np.at(3));
}

}  // namespace
}  // namespace rnvme
