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

TEST(DoctorSnapshotJson, FailoverHoldFactsRoundTrip) {
  auto s = softroce();
  s.modules.rnvme_failover_hold = false;
  s.subsystems.push_back(
      {"nvme-subsys0", "nqn.2024-01.io.rnvme:target1", {{"nvme0", 0, 10000, 1}, {"nvme1", 250, std::nullopt, std::nullopt}}});
  const auto j = snapshot_to_json(s);
  EXPECT_EQ(j["modules"]["rnvme_failover_hold"], false);
  EXPECT_EQ(j["subsystems"][0]["controllers"][1]["failover_hold_ms"], nullptr);
  auto back = snapshot_from_json(j);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->modules.rnvme_failover_hold, false);
  ASSERT_EQ(back->subsystems.size(), 1u);
  ASSERT_EQ(back->subsystems[0].controllers.size(), 2u);
  EXPECT_EQ(back->subsystems[0].controllers[0].failover_hold_ms, 10000);
  EXPECT_EQ(back->subsystems[0].controllers[1].cqt_ms, 250);
  EXPECT_FALSE(back->subsystems[0].controllers[1].failover_hold_ms);
  EXPECT_EQ(back->subsystems[0].controllers[0].ccr_offered, 1);
  EXPECT_FALSE(back->subsystems[0].controllers[1].ccr_offered);
  EXPECT_EQ(snapshot_to_json(*back), j);
  // a snapshot recorded before these facts: the parameter unknown, no subsystems
  auto older = snapshot_from_json(nlohmann::json{{"modules", {{"rnvme_loaded", true}}}});
  ASSERT_TRUE(older.ok());
  EXPECT_FALSE(older->modules.rnvme_failover_hold);
  EXPECT_TRUE(older->subsystems.empty());
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
