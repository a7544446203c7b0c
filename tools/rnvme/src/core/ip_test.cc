#include "core/ip.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <string>

namespace rnvme {
namespace {

TEST(Ip, ParsesIpv4) {
  auto a = parse_ip("192.0.2.10");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->family, AF_INET);
  EXPECT_EQ(a->size(), 4u);
  EXPECT_EQ(a->bytes[0], 192);
  EXPECT_EQ(a->bytes[3], 10);
  EXPECT_EQ(a->bytes[4], 0);
}

TEST(Ip, ParsesIpv6AndItsSpellingsAreOneAddress) {
  auto a = parse_ip("2001:db8::1");
  auto b = parse_ip("2001:0db8:0000:0000:0000:0000:0000:0001");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->family, AF_INET6);
  EXPECT_EQ(a->size(), 16u);
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *parse_ip("2001:db8::2"));
}

TEST(Ip, RefusesWhatIsNotAnAddress) {
  for (std::string s : {"", "nvme-target", "192.0.2", "192.0.2.256", " 192.0.2.1", "192.0.2.1\n",
                        "192.0.2.1:4420", "fe80::1%eth0", "[2001:db8::1]", "2001:db8::1::2"})
    EXPECT_FALSE(parse_ip(s)) << "'" << s << "'";
  EXPECT_FALSE(parse_ip(std::string("192.0.2.1\0junk", 14)));
  EXPECT_FALSE(is_ip_address("host.example"));
  EXPECT_TRUE(is_ip_address("::1"));
}

TEST(Ip, TextOfAnAddressAsInetNtopWritesIt) {
  EXPECT_EQ(ip_text(*parse_ip("192.0.2.10")), "192.0.2.10");
  EXPECT_EQ(ip_text(*parse_ip("2001:0db8:0000:0000:0000:0000:0000:0001")), "2001:db8::1");
  EXPECT_EQ(ip_text(*parse_ip("::ffff:192.0.2.1")), "::ffff:192.0.2.1");
  const uint8_t v4[4] = {198, 51, 100, 7};
  EXPECT_EQ(ip_text(AF_INET, v4), "198.51.100.7");
  EXPECT_EQ(ip_text(0, v4), "");
  EXPECT_EQ(ip_text(AF_INET, nullptr), "");
}

}  // namespace
}  // namespace rnvme
