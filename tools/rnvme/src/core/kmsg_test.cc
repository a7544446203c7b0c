#include "core/kmsg.h"

#include <gtest/gtest.h>

namespace rnvme {
namespace {

TEST(Kmsg, ParsesRecord) {
  auto r = parse_kmsg_record("3,1234,5678901,-;nvme nvme0: rdma connection establishment failed (-104)\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->level, 3);
  EXPECT_EQ(r->seq, 1234u);
  EXPECT_EQ(r->usec, 5678901u);
  EXPECT_EQ(r->text, "nvme nvme0: rdma connection establishment failed (-104)");
}

TEST(Kmsg, FacilityBitsAndContinuationLines) {
  auto r = parse_kmsg_record("30,7,100,c;nvme_fabrics: invalid parameter 'foo=%s'\n SUBSYSTEM=misc\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->level, 6);  // 30 = facility 3 (daemon) << 3 | level 6
  EXPECT_EQ(r->text, "nvme_fabrics: invalid parameter 'foo=%s'");
}

TEST(Kmsg, MalformedRecords) {
  EXPECT_FALSE(parse_kmsg_record("no separator"));
  EXPECT_FALSE(parse_kmsg_record("x,1,2,-;text"));
  EXPECT_FALSE(parse_kmsg_record("6,1;text"));
}

TEST(Kmsg, ConnectRelated) {
  EXPECT_TRUE(is_connect_related("nvme nvme0: new ctrl: NQN \"x\""));
  EXPECT_TRUE(is_connect_related("rnvme: Connect rejected: status 8 (invalid service ID)."));
  EXPECT_TRUE(is_connect_related("infiniband rxe0: set active"));
  EXPECT_TRUE(is_connect_related("nvmet: connect request for invalid subsystem x!"));
  EXPECT_FALSE(is_connect_related("e1000e: eth0 NIC Link is Up"));
  EXPECT_FALSE(is_connect_related("EXT4-fs (sda1): mounted filesystem"));
}

}  // namespace
}  // namespace rnvme
