#include "core/telemetry.h"

#include <gtest/gtest.h>

#include <limits>

#include "testing/test_env.h"

namespace rnvme {
namespace {

using testing::TeleQueue;
using testing::telemetry_blob_v1;
using testing::telemetry_layout_v1;

const HistGeometry kGeo{210, 10, 3};

TEST(Telemetry, BucketBoundsByHand) {
  // bucket 0: below 1024 ns; then eight buckets per power of two
  EXPECT_EQ(bucket_upper_ns(kGeo, 0), 1024u);
  EXPECT_EQ(bucket_upper_ns(kGeo, 1), 1152u);   // 1024 + 128
  EXPECT_EQ(bucket_upper_ns(kGeo, 8), 2048u);
  EXPECT_EQ(bucket_upper_ns(kGeo, 9), 2304u);   // 2048 + 256
  EXPECT_EQ(bucket_upper_ns(kGeo, 53), 106496u);  // 100 us falls in [98304, 106496)
  EXPECT_EQ(bucket_upper_ns(kGeo, 208), uint64_t{1} << 36);
  EXPECT_EQ(bucket_upper_ns(kGeo, 209), std::nullopt);  // +Inf
}

TEST(Telemetry, Percentiles) {
  std::vector<uint64_t> h(210, 0);
  EXPECT_EQ(percentile_ns(kGeo, h, 50), std::nullopt);
  h[1] = 90;
  h[20] = 10;
  EXPECT_EQ(percentile_ns(kGeo, h, 50), 1152u);
  EXPECT_EQ(percentile_ns(kGeo, h, 90), 1152u);   // the 90th of 100 is still in bucket 1
  EXPECT_EQ(percentile_ns(kGeo, h, 91), 6144u);   // bucket 20: 2^12 + 3 * 512 .. 6144
  EXPECT_EQ(percentile_ns(kGeo, h, 100), 6144u);
  h[209] = 1000;
  EXPECT_EQ(percentile_ns(kGeo, h, 99), std::numeric_limits<uint64_t>::max());
}

std::vector<TeleQueue> sample() {
  TeleQueue admin{0, 2, {{"completed_other", 5}, {"keep_alive_count", 2}}, {{"other", {{30, 5}}}}};
  TeleQueue q1{1, 2, {{"completed_read", 3}, {"latency_sum_ns_read", 6000}, {"wc_wr_flush_err", 4}},
               {{"read", {{1, 2}, {9, 1}}}}};
  TeleQueue q2{2, 3, {{"completed_read", 1}}, {{"read", {{9, 1}}}}};
  return {admin, q1, q2};
}

TEST(Telemetry, DecodesVersion1) {
  auto t = decode_telemetry(telemetry_layout_v1(), telemetry_blob_v1(sample()));
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->version, 1);
  EXPECT_TRUE(t->enabled);
  EXPECT_EQ(t->ns_since_reset, 10000000000u);
  ASSERT_EQ(t->queues.size(), 3u);
  EXPECT_EQ(t->queues[1].qid, 1);
  EXPECT_EQ(t->queues[1].get("completed_read"), 3u);
  EXPECT_EQ(t->queues[1].get("wc_wr_flush_err"), 4u);
  EXPECT_TRUE(t->queues[2].poll);
  EXPECT_FALSE(t->queues[1].poll);
  EXPECT_EQ(t->queues[1].hist.at("read")[9], 1u);
  EXPECT_EQ(sum_counter(*t, "completed_read", true), 4u);
  EXPECT_EQ(sum_counter(*t, "completed_other", true), 0u);
  EXPECT_EQ(sum_counter(*t, "completed_other", false), 5u);
  auto h = sum_hist(*t, "read");
  EXPECT_EQ(h[1], 2u);
  EXPECT_EQ(h[9], 2u);
}

TEST(Telemetry, RefusesWhatItCannotRead) {
  const std::string layout = telemetry_layout_v1();
  const std::string blob = telemetry_blob_v1(sample());
  std::string bad_magic = blob;
  bad_magic[0] ^= 1;
  EXPECT_FALSE(decode_telemetry(layout, bad_magic));
  EXPECT_FALSE(decode_telemetry(layout, blob.substr(0, blob.size() - 8)));   // a word short
  EXPECT_FALSE(decode_telemetry(layout, blob.substr(0, blob.size() - 3)));   // not whole words
  EXPECT_FALSE(decode_telemetry(layout, ""));
  std::string v2 = layout;
  v2.replace(v2.find("version 1"), 9, "version 2");
  EXPECT_FALSE(decode_telemetry(v2, blob));
  std::string fewer = layout;
  fewer.replace(fewer.find(" wc_unknown"), 11, "");   // layout and header disagree
  EXPECT_FALSE(decode_telemetry(fewer, blob));
  EXPECT_FALSE(decode_telemetry("", blob));
  // a version the kernel wrote that is not a version this tool reads: not one read as 1 after
  // wrapping round an int, nor one with text after its digits
  for (const char* v : {"version 4294967297", "version 1x", "version 99999999999999999999"}) {
    std::string odd = layout;
    odd.replace(odd.find("version 1"), 9, v);
    auto r = decode_telemetry(odd, blob);
    ASSERT_FALSE(r) << v;
    EXPECT_NE(r.error().message.find("layout version 0, expected 1"), std::string::npos)
        << r.error().message;
  }
  // classes stats and top look up by name (they threw std::out_of_range: "internal error")
  std::string renamed = layout;
  renamed.replace(renamed.find("histograms read write other"), 27, "histograms rd write other");
  auto nr = decode_telemetry(renamed, blob);
  ASSERT_FALSE(nr);
  EXPECT_NE(nr.error().message.find("no read histogram"), std::string::npos) << nr.error().message;
  auto e = decode_telemetry(layout, bad_magic);
  EXPECT_NE(e.error().message.find("magic"), std::string::npos);
}

TEST(Telemetry, PrometheusExposition) {
  auto t = decode_telemetry(telemetry_layout_v1(), telemetry_blob_v1(sample()));
  ASSERT_TRUE(t);
  t->device = "nvme0";
  t->rdma_device = "rxe0";
  t->rdma_counters = {{"retry_exceeded_err", 7}};
  const std::string p = render_prometheus({*t});
  EXPECT_NE(p.find("# HELP rnvme_queue_completed_read_total read commands answered by the target\n"
                   "# TYPE rnvme_queue_completed_read_total counter\n"),
            std::string::npos);
  EXPECT_NE(p.find("rnvme_queue_completed_read_total{ctrl=\"nvme0\",queue=\"1\"} 3\n"), std::string::npos);
  EXPECT_NE(p.find("# TYPE rnvme_queue_status_last gauge\n"), std::string::npos);
  EXPECT_NE(p.find("# TYPE rnvme_queue_latency_seconds histogram\n"), std::string::npos);
  // cumulative buckets with le in seconds
  EXPECT_NE(p.find("rnvme_queue_latency_seconds_bucket{ctrl=\"nvme0\",queue=\"1\",class=\"read\",le=\"1.024e-06\"} 0\n"),
            std::string::npos);
  EXPECT_NE(p.find("rnvme_queue_latency_seconds_bucket{ctrl=\"nvme0\",queue=\"1\",class=\"read\",le=\"1.152e-06\"} 2\n"),
            std::string::npos);
  EXPECT_NE(p.find("rnvme_queue_latency_seconds_bucket{ctrl=\"nvme0\",queue=\"1\",class=\"read\",le=\"2.304e-06\"} 3\n"),
            std::string::npos);
  EXPECT_NE(p.find("rnvme_queue_latency_seconds_bucket{ctrl=\"nvme0\",queue=\"1\",class=\"read\",le=\"+Inf\"} 3\n"),
            std::string::npos);
  EXPECT_NE(p.find("rnvme_queue_latency_seconds_sum{ctrl=\"nvme0\",queue=\"1\",class=\"read\"} 6e-06\n"),
            std::string::npos);
  EXPECT_NE(p.find("rnvme_queue_latency_seconds_count{ctrl=\"nvme0\",queue=\"1\",class=\"read\"} 3\n"),
            std::string::npos);
  EXPECT_NE(p.find("rnvme_rdma_port_counter_total{ctrl=\"nvme0\",rdma_device=\"rxe0\",counter=\"retry_exceeded_err\"} 7\n"),
            std::string::npos);
  // no family twice, every sample after its TYPE line, the file ends with a newline
  EXPECT_EQ(p.back(), '\n');
  EXPECT_EQ(p.find("# TYPE rnvme_queue_completed_read_total"),
            p.rfind("# TYPE rnvme_queue_completed_read_total"));
  EXPECT_EQ(p.find("latency_sum_ns"), std::string::npos);  // those are the histogram's _sum
  EXPECT_EQ(render_prometheus({}), "");
}

// One family per failover-hold value for all controllers, a sample for each controller that
// reports the value, milliseconds in seconds.
TEST(Telemetry, PrometheusFailoverHoldFamilies) {
  auto a = decode_telemetry(telemetry_layout_v1(), telemetry_blob_v1(sample()));
  ASSERT_TRUE(a);
  CtrlTelemetry b = *a, c = *a;
  a->device = "nvme0";
  a->hold = {7, 0, 1500, 10250, 250};
  b.device = "nvme1";   // an older rnvme.ko: no hold files
  c.device = "nvme2";
  c.hold.held_commands = 2;  // only one file read
  const std::string p = render_prometheus({*a, b, c});
  EXPECT_NE(p.find("# HELP rnvme_ctrl_held_commands_total commands the failover hold kept since the controller "
                   "was created\n# TYPE rnvme_ctrl_held_commands_total counter\n"
                   "rnvme_ctrl_held_commands_total{ctrl=\"nvme0\"} 7\n"
                   "rnvme_ctrl_held_commands_total{ctrl=\"nvme2\"} 2\n#"),
            std::string::npos)
      << p;
  EXPECT_NE(p.find("# TYPE rnvme_ctrl_held_now gauge\nrnvme_ctrl_held_now{ctrl=\"nvme0\"} 0\n#"), std::string::npos);
  EXPECT_NE(p.find("# TYPE rnvme_ctrl_last_hold_seconds gauge\nrnvme_ctrl_last_hold_seconds{ctrl=\"nvme0\"} 1.5\n"),
            std::string::npos);
  EXPECT_NE(p.find("rnvme_ctrl_failover_hold_seconds{ctrl=\"nvme0\"} 10.25\n"), std::string::npos);
  EXPECT_NE(p.find("rnvme_ctrl_cqt_seconds{ctrl=\"nvme0\"} 0.25\n"), std::string::npos);
  EXPECT_EQ(p.find("{ctrl=\"nvme1\"}"), std::string::npos) << "nvme1 reports nothing";
  EXPECT_EQ(p.find("# TYPE rnvme_ctrl_cqt_seconds"), p.rfind("# TYPE rnvme_ctrl_cqt_seconds"));
  // without any controller reporting the hold, no family at all
  EXPECT_EQ(render_prometheus({b}).find("rnvme_ctrl_"), std::string::npos);
}

TEST(Telemetry, EveryCounterHasItsOwnHelp) {
  auto t = decode_telemetry(telemetry_layout_v1(), telemetry_blob_v1(sample()));
  ASSERT_TRUE(t);
  for (const auto& n : t->scalars)
    EXPECT_EQ(counter_help(n).find("rnvme telemetry counter"), std::string::npos) << n;
}

}  // namespace
}  // namespace rnvme
