#include "core/doctor.h"

#include <gtest/gtest.h>

#include <map>

#include "core/doctor/test_support.h"

namespace rnvme {
namespace {

using namespace doctor_test;

TEST(DoctorTos, MapTosThroughTheDscpAppTable) {
  DcbState d;
  d.support = DcbState::kPresent;
  d.apps = {{5, 3, 26}, {5, 7, 48}, {1, 4, 0x8915}};
  auto m = map_tos(d, 106);  // DSCP 26 with ECT(0)
  EXPECT_EQ(m.dscp, 26);
  ASSERT_TRUE(m.priority);
  EXPECT_EQ(*m.priority, 3);
  m = map_tos(d, 0);
  EXPECT_FALSE(m.priority) << "DSCP trust without an entry: the device decides";
  EXPECT_TRUE(has(m.how, "no entry for DSCP 0"));
  d.apps = {{1, 4, 0x8915}};  // only an ethertype entry: PCP trust
  m = map_tos(d, 106);
  ASSERT_TRUE(m.priority);
  EXPECT_EQ(*m.priority, 0);
  d.support = DcbState::kAbsent;
  EXPECT_FALSE(map_tos(d, 106).priority);
}

TEST(DoctorTos, TosToSkbPriorityIsTheKernelsTable) {
  EXPECT_EQ(tos_to_skb_priority(0), 0);
  EXPECT_EQ(tos_to_skb_priority(0x10), 6);  // IPTOS_LOWDELAY: TC_PRIO_INTERACTIVE
  EXPECT_EQ(tos_to_skb_priority(0x08), 2);  // IPTOS_THROUGHPUT: TC_PRIO_BULK
  EXPECT_EQ(tos_to_skb_priority(0x18), 4);  // both: TC_PRIO_INTERACTIVE_BULK
  EXPECT_EQ(tos_to_skb_priority(0x04), 0);  // IPTOS_RELIABILITY: best effort
  EXPECT_EQ(tos_to_skb_priority(106), 2);   // DSCP 26 + ECT(0): 0x6a & 0x1e = 0x0a
}

TEST(DoctorTos, PcpTrustOnAVlanUsesItsEgressQosMap) {
  DcbState d;
  d.support = DcbState::kPresent;
  std::map<int, int> egress = {{0, 3}, {2, 5}};
  auto m = map_tos(d, 0, &egress);
  ASSERT_TRUE(m.priority);
  EXPECT_EQ(*m.priority, 3);
  EXPECT_TRUE(has(m.how, "egress-qos-map gives skb priority 0 (of tos 0) PCP 3")) << m.how;
  m = map_tos(d, 106, &egress);
  EXPECT_EQ(*m.priority, 5);
  m = map_tos(d, 0x10, &egress);  // skb priority 6: not in the map
  EXPECT_EQ(*m.priority, 0);
  EXPECT_TRUE(has(m.how, "(unmapped)"));
  d.apps = {{5, 4, 0}};  // DSCP trust: the VLAN's PCP does not matter
  EXPECT_EQ(*map_tos(d, 0, &egress).priority, 4);
}

TEST(DoctorTos, MapTosFollowsTheTrustTable) {
  DcbState d;
  d.support = DcbState::kPresent;
  d.apps = {{5, 3, 26}};
  d.trust = {255};  // PCP only: the DSCP entries are not used
  auto m = map_tos(d, 104);
  ASSERT_TRUE(m.priority);
  EXPECT_EQ(*m.priority, 0);
  EXPECT_TRUE(has(m.how, "trust table does not include DSCP"));
  d.trust = {5, 255};
  m = map_tos(d, 104);
  ASSERT_TRUE(m.priority);
  EXPECT_EQ(*m.priority, 3);
  d.apps.clear();  // DSCP trusted but not mapped
  EXPECT_FALSE(map_tos(d, 104).priority);
}

}  // namespace
}  // namespace rnvme
