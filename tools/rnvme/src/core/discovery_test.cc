#include "core/discovery.h"

#include <gtest/gtest.h>

#include "testing/test_env.h"

namespace rnvme {
namespace {

using testing::make_discovery_log;

TEST(Discovery, DecodesEntriesAndTrimsPadding) {
  auto bytes = make_discovery_log({{"nqn.2024-01.io.rnvme:a", "192.168.50.10", "4420"},
                                   {"nqn.2014-08.org.nvmexpress.discovery", "192.168.50.10", "4420", 3}},
                                  42);
  auto log = decode_discovery_log(bytes);
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->genctr, 42u);
  EXPECT_EQ(log->numrec, 2u);
  ASSERT_EQ(log->entries.size(), 2u);
  const auto& e = log->entries[0];
  EXPECT_EQ(e.trtype, 1);
  EXPECT_EQ(e.subtype, 2);
  EXPECT_EQ(e.portid, 1);
  EXPECT_EQ(e.cntlid, 0xffff);
  EXPECT_EQ(e.asqsz, 32);
  EXPECT_EQ(e.traddr, "192.168.50.10");
  EXPECT_EQ(e.trsvcid, "4420");
  EXPECT_EQ(e.subnqn, "nqn.2024-01.io.rnvme:a");
  EXPECT_EQ(e.rdma_qptype, 1);
  EXPECT_EQ(e.rdma_cms, 1);
  EXPECT_EQ(log->entries[1].subtype, 3);
  EXPECT_EQ(log->entries[1].portid, 2);
}

TEST(Discovery, EmptyLog) {
  auto log = decode_discovery_log(make_discovery_log({}));
  ASSERT_TRUE(log.ok());
  EXPECT_TRUE(log->entries.empty());
}

TEST(Discovery, TruncatedPageIsAnErrorNotACrash) {
  auto bytes = make_discovery_log({{"nqn.2024-01.io.rnvme:a", "10.0.0.1", "4420"}});
  bytes.resize(bytes.size() - 1);
  auto log = decode_discovery_log(bytes);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.error().message.find("claims 1 records"), std::string::npos);
  std::vector<uint8_t> tiny(100);
  EXPECT_FALSE(decode_discovery_log(tiny).ok());
  EXPECT_FALSE(decode_discovery_header(tiny).ok());
}

TEST(Discovery, HugeNumrecIsRejected) {
  auto bytes = make_discovery_log({});
  bytes[15] = 0x7f;  // numrec ~ 2^63
  EXPECT_FALSE(decode_discovery_log(bytes).ok());
}

// A hostile target: numrec says 2 but only one record carries data (the rest of the host buffer
// stays zero), or the strings fill their fields with no NUL or padding.
TEST(Discovery, BlankRecordIsAnError) {
  auto bytes = make_discovery_log({{"nqn.2024-01.io.rnvme:a", "10.0.0.1", "4420"},
                                   {"nqn.2024-01.io.rnvme:b", "10.0.0.1", "4420"}});
  std::fill(bytes.begin() + kDiscoveryHeaderSize + kDiscoveryEntrySize, bytes.end(), 0);
  auto log = decode_discovery_log(bytes);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.error().message.find("record 1 of 2 has no subsystem NQN"), std::string::npos)
      << log.error().message;
  auto noaddr = make_discovery_log({{"nqn.2024-01.io.rnvme:a", "", "4420"}});
  ASSERT_FALSE(decode_discovery_log(noaddr).ok());
}

TEST(Discovery, UnterminatedStringsStayWithinTheirFields) {
  auto bytes = make_discovery_log({{"x", "y", "z"}});
  auto* e = bytes.data() + kDiscoveryHeaderSize;
  std::fill(e + 32, e + 64, 'P');
  std::fill(e + 256, e + 512, 'N');
  std::fill(e + 512, e + 768, 'A');
  auto log = decode_discovery_log(bytes);
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->entries[0].trsvcid, std::string(32, 'P'));
  EXPECT_EQ(log->entries[0].subnqn, std::string(256, 'N'));
  EXPECT_EQ(log->entries[0].traddr, std::string(256, 'A'));
}

TEST(Discovery, NonRdmaEntryHasNoRdmaFields) {
  auto bytes = make_discovery_log({{"nqn.2024-01.io.rnvme:tcp", "10.0.0.1", "4420", 2, 3}});
  auto log = decode_discovery_log(bytes);
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->entries[0].rdma_qptype, 0);
  EXPECT_EQ(trtype_name(log->entries[0].trtype), "tcp");
}

TEST(Discovery, Names) {
  EXPECT_EQ(trtype_name(1), "rdma");
  EXPECT_EQ(trtype_name(99), "unrecognized(99)");
  EXPECT_EQ(adrfam_name(2), "ipv6");
  EXPECT_EQ(subtype_name(1), "referral");
  EXPECT_EQ(treq_name(2), "not required");
  EXPECT_EQ(treq_name(6), "not required, sq flow control disable supported");
  EXPECT_EQ(rdma_prtype_name(4), "roce-v2");
  EXPECT_EQ(rdma_qptype_name(1), "connected");
  EXPECT_EQ(rdma_cms_name(1), "rdma-cm");
}

// The tokens rnvme printed before it took the names from libnvme (discover's JSON and text, and
// connect-all's skip reasons), for every value of every field: the names are an interface.
std::string named_before(uint8_t v, std::initializer_list<std::pair<uint8_t, const char*>> names) {
  for (auto [k, n] : names)
    if (k == v) return n;
  return "unrecognized(" + std::to_string(v) + ")";
}

TEST(Discovery, NamesKeepTheirTokensForEveryValue) {
  for (unsigned i = 0; i < 256; i++) {
    const auto v = static_cast<uint8_t>(i);
    SCOPED_TRACE(i);
    EXPECT_EQ(trtype_name(v), named_before(v, {{1, "rdma"}, {2, "fc"}, {3, "tcp"}, {254, "loop"}}));
    EXPECT_EQ(adrfam_name(v), named_before(v, {{1, "ipv4"}, {2, "ipv6"}, {3, "infiniband"},
                                               {4, "fibre-channel"}, {254, "loop"}}));
    EXPECT_EQ(subtype_name(v), named_before(v, {{1, "referral"}, {2, "nvme subsystem"},
                                                {3, "current discovery subsystem"}}));
    std::string treq = named_before(v & 3, {{0, "not specified"}, {1, "required"}, {2, "not required"}});
    if (v & 4) treq += ", sq flow control disable supported";
    EXPECT_EQ(treq_name(v), treq);
    EXPECT_EQ(rdma_qptype_name(v), named_before(v, {{1, "connected"}, {2, "datagram"}}));
    EXPECT_EQ(rdma_prtype_name(v), named_before(v, {{1, "not specified"}, {2, "infiniband"}, {3, "roce"},
                                                    {4, "roce-v2"}, {5, "iwarp"}}));
    EXPECT_EQ(rdma_cms_name(v), named_before(v, {{1, "rdma-cm"}}));
  }
}

// A page as a target sends it, with the fields the sample pages leave at one value changed in
// place: the names come from the decoded bytes.
TEST(Discovery, NamesOfADecodedPage) {
  auto bytes = make_discovery_log({{"nqn.2014-08.org.nvmexpress.discovery", "fd00::10", "4420", 1},
                                   {"nqn.2024-01.io.rnvme:b", "10.0.0.1", "4420", 2, 3}});
  auto* e0 = bytes.data() + kDiscoveryHeaderSize;
  auto* e1 = e0 + kDiscoveryEntrySize;
  e0[1] = 2;      // adrfam ipv6
  e0[3] = 6;      // treq: not required, SQ flow control disable supported
  e0[769] = 4;    // prtype roce-v2
  e1[1] = 254;    // adrfam intra-host
  e1[3] = 3;      // treq: reserved secure channel value
  auto log = decode_discovery_log(bytes);
  ASSERT_TRUE(log.ok()) << log.error().message;
  const auto& a = log->entries[0];
  EXPECT_EQ(trtype_name(a.trtype), "rdma");
  EXPECT_EQ(adrfam_name(a.adrfam), "ipv6");
  EXPECT_EQ(subtype_name(a.subtype), "referral");
  EXPECT_EQ(treq_name(a.treq), "not required, sq flow control disable supported");
  EXPECT_EQ(rdma_prtype_name(a.rdma_prtype), "roce-v2");
  EXPECT_EQ(rdma_qptype_name(a.rdma_qptype), "connected");
  EXPECT_EQ(rdma_cms_name(a.rdma_cms), "rdma-cm");
  const auto& b = log->entries[1];
  EXPECT_EQ(trtype_name(b.trtype), "tcp");
  EXPECT_EQ(adrfam_name(b.adrfam), "loop");
  EXPECT_EQ(subtype_name(b.subtype), "nvme subsystem");
  EXPECT_EQ(treq_name(b.treq), "unrecognized(3)");
  EXPECT_EQ(rdma_prtype_name(b.rdma_prtype), "unrecognized(0)");  // not decoded for tcp
}

// A log entry's connect options: its address and NQN on the discovery controller's options, and
// disable_sqflow when its treq allows it (bit 2), as libnvme 1.3 connects a log entry.
TEST(Discovery, EntryConnectOptions) {
  ConnectOptions tmpl;
  tmpl.traddr = "192.168.50.1";
  tmpl.nqn = std::string(kDiscoveryNqn);
  tmpl.hostnqn = "nqn.2024-01.io.rnvme:host";
  tmpl.queue_size = 32;
  DiscoveryEntry e;
  e.traddr = "192.168.50.10";
  e.trsvcid = "4421";
  e.subnqn = "nqn.2024-01.io.rnvme:target1";
  e.treq = 2;  // secure channel not required, SQ flow control on
  ConnectOptions o = entry_connect_options(tmpl, e);
  EXPECT_EQ(o.traddr, "192.168.50.10");
  EXPECT_EQ(o.trsvcid, "4421");
  EXPECT_EQ(o.nqn, "nqn.2024-01.io.rnvme:target1");
  EXPECT_EQ(o.hostnqn, tmpl.hostnqn);
  EXPECT_EQ(o.queue_size, 32);
  EXPECT_FALSE(o.disable_sqflow);
  e.treq = 2 | kTreqDisableSqflow;
  EXPECT_TRUE(entry_connect_options(tmpl, e).disable_sqflow);
  EXPECT_EQ(kTreqDisableSqflow, 4);  // NVMF_TREQ_DISABLE_SQFLOW, (1 << 2)
}

}  // namespace
}  // namespace rnvme
