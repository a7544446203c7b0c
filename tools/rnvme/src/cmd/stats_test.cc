#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using testing::add_telemetry;
using testing::TeleQueue;
using testing::TestEnv;

// rnvme.ko's failover-hold files of `ctrl`, by name ("" leaves a file out: an older module)
void add_hold(TestEnv& env, const std::string& ctrl, const std::map<std::string, std::string>& files) {
  for (const auto& [name, value] : files)
    if (!value.empty()) env.fs.add("/sys/class/nvme/" + ctrl + "/rnvme/" + name, value + "\n");
}

// a controller that held 12 writes over its life, 3 of them now, behind a 15 s hold without CQT
const std::map<std::string, std::string> kHeld = {{"held_commands", "12"}, {"held_now", "3"},
                                                  {"last_hold_ms", "15012"}, {"failover_hold_ms", "15000"},
                                                  {"cqt_ms", "0"}};

void add_sample(TestEnv& env) {
  testing::add_sample_controllers(env.fs);
  TeleQueue admin{0, 2, {{"completed_other", 4}, {"keep_alive_count", 2}, {"keep_alive_sum_ns", 3000000},
                         {"keep_alive_last_ns", 1000000}, {"keep_alive_max_ns", 2000000},
                         {"wc_success", 8}}, {{"other", {{60, 4}}}}};
  TeleQueue q1{1, 2, {{"submitted_read", 3000}, {"completed_read", 3000}, {"bytes_read", 12288000},
                      {"data_registered", 3000}, {"completed_write", 1000}, {"bytes_write", 4096000},
                      {"data_inline", 1000}, {"status_success", 4000}, {"wc_success", 9000},
                      {"wc_wr_flush_err", 3}, {"requeued", 2}},
               {{"read", {{80, 1500}, {100, 1500}}}, {"write", {{90, 1000}}}}};
  add_telemetry(env.fs, "nvme0", {admin, q1});
  RdmaDevice d;
  d.index = 0;
  d.name = "rxe0";
  RdmaPort p;
  p.index = 1;
  d.ports.push_back(p);
  env.netlink.devs.push_back(d);
  env.netlink.counters[{0, 1}] = {{"retry_exceeded_err", 0}, {"rcvd_rnr_err", 5}};
  add_hold(env, "nvme0", kHeld);
}

TEST(Stats, TextIsGolden) {
  TestEnv env;
  add_sample(env);
  ASSERT_TRUE(run_stats(env.ctx, {}));
  testing::expect_golden("stats.txt", env.out.str());
  // 80 columns
  std::istringstream in(env.out.str());
  for (std::string line; std::getline(in, line);) EXPECT_LE(line.size(), 80u) << line;
}

TEST(Stats, JsonCarriesCountersPercentilesAndRdmaCounters) {
  TestEnv env;
  add_sample(env);
  env.json();
  ASSERT_TRUE(run_stats(env.ctx, {"nvme0", false, false}));
  auto j = nlohmann::json::parse(env.out.str());
  EXPECT_EQ(j["version"], 1);
  auto c = j["controllers"][0];
  EXPECT_EQ(c["device"], "nvme0");
  EXPECT_EQ(c["rdma_device"], "rxe0");
  EXPECT_EQ(c["queues"][1]["counters"]["completed_read"], 3000);
  EXPECT_EQ(c["queues"][0]["type"], "admin");
  EXPECT_EQ(c["io_latency"]["read"]["count"], 3000);
  // bucket 80: 2^19 + 7/8 of it .. 2^20 ns -> p50 is its upper bound; p99 in bucket 100:
  // 2^22 + 3/8 of it .. 2^22 + 4/8 of it = 6291456 ns
  EXPECT_EQ(c["io_latency"]["read"]["p50_ns"], 1048576);
  EXPECT_EQ(c["io_latency"]["read"]["p99_ns"], 6291456);
  EXPECT_EQ(c["io_latency"]["other"]["p50_ns"], nullptr);
  EXPECT_EQ(c["rdma_counters"]["rcvd_rnr_err"], 5);
}

TEST(Stats, PrometheusIsRaw) {
  TestEnv env;
  add_sample(env);
  ASSERT_TRUE(run_stats(env.ctx, {"", true, false}));
  const std::string o = env.out.str();
  EXPECT_EQ(o.rfind("# HELP ", 0), 0u);
  EXPECT_NE(o.find("rnvme_queue_latency_seconds_count{ctrl=\"nvme0\",queue=\"1\",class=\"read\"} 3000\n"),
            std::string::npos);
  EXPECT_NE(o.find("counter=\"rcvd_rnr_err\"} 5\n"), std::string::npos);
}

TEST(Stats, FailoverHoldInTextJsonAndPrometheus) {
  TestEnv env;
  add_sample(env);
  ASSERT_TRUE(run_stats(env.ctx, {"nvme0", false, false}));
  EXPECT_NE(env.out.str().find("\n  failover hold: 15000 ms, CQT 0 ms\n  held: 3 now, 12 in all, last hold 15012 ms\n"),
            std::string::npos)
      << env.out.str();

  TestEnv js;
  add_sample(js);
  js.json();
  ASSERT_TRUE(run_stats(js.ctx, {"nvme0", false, false}));
  auto j = nlohmann::json::parse(js.out.str());
  EXPECT_EQ(j["controllers"][0]["failover_hold"],
            nlohmann::json::parse(R"({"held_commands": 12, "held_now": 3, "last_hold_ms": 15012,
                                      "failover_hold_ms": 15000, "cqt_ms": 0})"));

  TestEnv prom;
  add_sample(prom);
  ASSERT_TRUE(run_stats(prom.ctx, {"", true, false}));
  const std::string o = prom.out.str();
  for (const char* line : {"# TYPE rnvme_ctrl_held_commands_total counter\n"
                           "rnvme_ctrl_held_commands_total{ctrl=\"nvme0\"} 12\n",
                           "# TYPE rnvme_ctrl_held_now gauge\nrnvme_ctrl_held_now{ctrl=\"nvme0\"} 3\n",
                           "rnvme_ctrl_last_hold_seconds{ctrl=\"nvme0\"} 15.012\n",
                           "rnvme_ctrl_failover_hold_seconds{ctrl=\"nvme0\"} 15\n",
                           "rnvme_ctrl_cqt_seconds{ctrl=\"nvme0\"} 0\n"})
    EXPECT_NE(o.find(line), std::string::npos) << line << "\n" << o;
}

// An rnvme.ko older than the failover hold has none of its files: the stats say so and go on.
TEST(Stats, NoFailoverHoldFilesIsNotAvailableNotAnError) {
  TestEnv env;
  add_sample(env);
  for (const auto& [name, v] : kHeld) env.fs.remove("/sys/class/nvme/nvme0/rnvme/" + name);
  ASSERT_TRUE(run_stats(env.ctx, {"nvme0", false, false}));
  EXPECT_NE(env.out.str().find("\n  failover hold: not available (this rnvme.ko has none)\n"), std::string::npos)
      << env.out.str();
  EXPECT_EQ(env.out.str().find("held:"), std::string::npos);

  TestEnv js;
  add_sample(js);
  for (const auto& [name, v] : kHeld) js.fs.remove("/sys/class/nvme/nvme0/rnvme/" + name);
  js.json();
  ASSERT_TRUE(run_stats(js.ctx, {}));
  const auto hold = nlohmann::json::parse(js.out.str())["controllers"][0]["failover_hold"];
  ASSERT_EQ(hold.size(), 5u);
  for (const auto& [k, v] : hold.items()) EXPECT_TRUE(v.is_null()) << k;

  TestEnv prom;
  add_sample(prom);
  for (const auto& [name, v] : kHeld) prom.fs.remove("/sys/class/nvme/nvme0/rnvme/" + name);
  ASSERT_TRUE(run_stats(prom.ctx, {"", true, false}));
  EXPECT_EQ(prom.out.str().find("rnvme_ctrl_"), std::string::npos) << "no family without a sample";
  EXPECT_NE(prom.out.str().find("rnvme_queue_latency_seconds"), std::string::npos);
}

TEST(Stats, HoldOffAndValuesTheModuleDoesNotGive) {
  TestEnv env;
  add_sample(env);
  add_hold(env, "nvme0", {{"failover_hold_ms", "0"}, {"cqt_ms", "250"}, {"held_now", "garbage"}});
  env.fs.remove("/sys/class/nvme/nvme0/rnvme/last_hold_ms");
  ASSERT_TRUE(run_stats(env.ctx, {"nvme0", false, false}));
  EXPECT_NE(env.out.str().find("\n  failover hold: off, CQT 250 ms\n  held: - now, 12 in all, last hold -\n"),
            std::string::npos)
      << env.out.str();
  env.out.str("");
  env.json();
  ASSERT_TRUE(run_stats(env.ctx, {"nvme0", false, false}));
  const auto hold = nlohmann::json::parse(env.out.str())["controllers"][0]["failover_hold"];
  EXPECT_EQ(hold["failover_hold_ms"], 0);
  EXPECT_EQ(hold["cqt_ms"], 250);
  EXPECT_TRUE(hold["held_now"].is_null());
  EXPECT_TRUE(hold["last_hold_ms"].is_null());
  EXPECT_EQ(hold["held_commands"], 12);
}

TEST(Stats, BadOrUnknownControllers) {
  TestEnv env;
  add_sample(env);
  auto bad = run_stats(env.ctx, {"foo;rm", false, false});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kUsage);
  auto missing = run_stats(env.ctx, {"nvme9", false, false});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  auto other = run_stats(env.ctx, {"nvme3", false, false});   // PCIe: no rnvme directory
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code, ErrorCode::kNotFound);
  env.fs.add("/sys/class/nvme/nvme0/rnvme/telemetry", "short");
  auto garbled = run_stats(env.ctx, {"nvme0", false, false});
  ASSERT_FALSE(garbled);
  EXPECT_NE(garbled.error().message.find("cannot decode"), std::string::npos);
}

TEST(Stats, LongCounterLinesWrapAt80) {
  TestEnv env;
  add_sample(env);
  std::map<std::string, uint64_t> many;
  for (const char* n : {"wc_wr_flush_err", "wc_retry_exc_err", "wc_rnr_retry_exc_err", "wc_rem_access_err",
                        "wc_loc_prot_err", "wc_fatal_err", "wc_general_err", "wc_unknown"})
    many[n] = 123456789;
  testing::add_telemetry(env.fs, "nvme0", {TeleQueue{1, 2, many, {}}});
  ASSERT_TRUE(run_stats(env.ctx, {"nvme0", false, false}));
  std::istringstream in(env.out.str());
  int lines = 0;
  for (std::string line; std::getline(in, line); lines++) EXPECT_LE(line.size(), 80u) << line;
  EXPECT_NE(env.out.str().find("unknown 123456789"), std::string::npos);
}

TEST(Stats, SaysWhenCountingIsOff) {
  TestEnv env;
  add_sample(env);
  env.fs.add("/sys/class/nvme/nvme0/rnvme/telemetry", testing::telemetry_blob_v1({{}}, 5, false));
  ASSERT_TRUE(run_stats(env.ctx, {"nvme0", false, false}));
  EXPECT_NE(env.out.str().find("telemetry off"), std::string::npos) << env.out.str();
  EXPECT_NE(env.out.str().find("counting is off"), std::string::npos);
}

TEST(Stats, NoRnvmeControllers) {
  TestEnv env;
  testing::add_sample_controllers(env.fs);
  ASSERT_TRUE(run_stats(env.ctx, {}));
  EXPECT_EQ(env.out.str(), "no rnvme controllers\n");
}

TEST(Stats, ResetWritesOneAndHonoursDryRun) {
  TestEnv env;
  add_sample(env);
  env.ctx.dry_run = true;
  ASSERT_TRUE(run_stats(env.ctx, {"nvme0", false, true}));
  EXPECT_TRUE(env.fs.writes.empty());
  env.ctx.dry_run = false;
  ASSERT_TRUE(run_stats(env.ctx, {"nvme0", false, true}));
  ASSERT_EQ(env.fs.writes.size(), 1u);
  EXPECT_EQ(env.fs.writes[0].first, "/sys/class/nvme/nvme0/rnvme/telemetry_reset");
  EXPECT_EQ(env.fs.writes[0].second, "1");
}

TEST(Stats, NetlinkUnavailableStillReports) {
  TestEnv env;
  add_sample(env);
  env.netlink.unavailable = true;
  env.json();
  ASSERT_TRUE(run_stats(env.ctx, {}));
  auto j = nlohmann::json::parse(env.out.str());
  EXPECT_TRUE(j["controllers"][0]["rdma_counters"].empty());
}

TEST(Top, FirstFrameAveragesSinceReset) {
  TestEnv env;
  add_sample(env);
  auto rep = collect_stats(env.ctx, "");
  ASSERT_TRUE(rep);
  const std::string f = render_top(nullptr, *rep, 0, "iops");
  testing::expect_golden("top.txt", f);
  // 4000 commands in the 10 s since the reset
  EXPECT_NE(f.find("nvme0          1        400"), std::string::npos) << f;
}

TEST(Top, RatesOverTheIntervalAndSortByLatency) {
  TestEnv env;
  add_sample(env);
  auto a = collect_stats(env.ctx, "");
  ASSERT_TRUE(a);
  auto b = *a;
  b.ctrls[0].queues[0].counters["completed_other"] += 20;     // admin: 20 in 2 s
  b.ctrls[0].queues[0].hist["other"][150] += 20;                // slow ones
  b.ctrls[0].queues[1].counters["completed_read"] += 2000;    // 1000 IOPS
  b.ctrls[0].queues[1].hist["read"][40] += 2000;
  const std::string byiops = render_top(&*a, b, 2.0, "iops");
  EXPECT_LT(byiops.find("nvme0          1       1000"), byiops.find("nvme0      admin")) << byiops;
  const std::string bylat = render_top(&*a, b, 2.0, "latency");
  EXPECT_GT(bylat.find("nvme0          1       1000"), bylat.find("nvme0      admin")) << bylat;
}

// -o json (and --json): a document per refresh, one per line, from the frame the text shows.
TEST(Top, JsonIsADocumentPerRefreshFromTheTextsModel) {
  TestEnv env;
  add_sample(env);
  env.json();
  TopArgs a;
  a.iterations = 2;
  a.interval = 0.1;
  ASSERT_TRUE(run_top(env.ctx, a));
  std::istringstream in(env.out.str());
  std::vector<nlohmann::json> docs;
  for (std::string line; std::getline(in, line);) docs.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(docs.size(), 2u) << env.out.str();
  const auto& first = docs[0];
  EXPECT_EQ(first["version"], 1);
  EXPECT_EQ(first["controllers"], 1);
  EXPECT_EQ(first["basis"], "since_reset");
  EXPECT_TRUE(first["interval_s"].is_null());
  EXPECT_EQ(first["sort"], "iops");
  ASSERT_EQ(first["queues"].size(), 2u);
  // the values of the golden text frame (top.txt), in its order
  const auto& q1 = first["queues"][0];
  EXPECT_EQ(q1["device"], "nvme0");
  EXPECT_EQ(q1["qid"], 1);
  EXPECT_EQ(q1["type"], "io");
  EXPECT_DOUBLE_EQ(q1["seconds"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(q1["iops"].get<double>(), 400.0);
  EXPECT_NEAR(q1["mib_per_s"].get<double>(), 1.6, 0.05);
  EXPECT_EQ(q1["p99_ns"], 6291456);
  EXPECT_EQ(q1["errors"], 5);
  EXPECT_EQ(first["queues"][1]["type"], "admin");
  EXPECT_EQ(docs[1]["basis"], "interval");
  EXPECT_GE(docs[1]["interval_s"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(docs[1]["queues"][0]["iops"].get<double>(), 0.0);  // nothing new since
  EXPECT_TRUE(docs[1]["queues"][0]["p50_ns"].is_null());
  // text and JSON are the same frame
  auto rep = collect_stats(env.ctx, "");
  ASSERT_TRUE(rep);
  const TopFrame f = top_frame(nullptr, *rep, 0, "iops");
  EXPECT_EQ(to_json(f)["queues"], first["queues"]);
  std::ostringstream text;
  Printer(Format::kText, text, text).print(f);
  EXPECT_EQ(text.str(), render_top(nullptr, *rep, 0, "iops"));
}

TEST(Top, RefusesBadArguments) {
  TestEnv env;
  add_sample(env);
  TopArgs a;
  a.sort = "name";
  EXPECT_EQ(run_top(env.ctx, a).error().code, ErrorCode::kUsage);
  a = {};
  a.interval = 0;
  EXPECT_EQ(run_top(env.ctx, a).error().code, ErrorCode::kUsage);
  a = {};
  a.iterations = 1;
  a.ctrl = "nvme9";
  EXPECT_EQ(run_top(env.ctx, a).error().code, ErrorCode::kNotFound);
  a.ctrl = "nvme0";
  ASSERT_TRUE(run_top(env.ctx, a));
  EXPECT_NE(env.out.str().find("rnvme top: 1 controller(s)"), std::string::npos);
}

}  // namespace
}  // namespace rnvme
