#include "core/tune.h"

#include <gtest/gtest.h>

#include "core/doctor.h"

namespace rnvme {
namespace {

TEST(TuneCore, CpuLists) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5"), (std::vector<int>{5}));
  EXPECT_FALSE(parse_cpu_list("3-1"));
  EXPECT_FALSE(parse_cpu_list("a"));
  EXPECT_EQ(format_cpu_list({8, 0, 1, 2, 3, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({4}), "4");
}

TEST(TuneCore, SelectedScheduler) {
  EXPECT_EQ(selected_scheduler("[mq-deadline] kyber none\n"), "mq-deadline");
  EXPECT_EQ(selected_scheduler("mq-deadline kyber [none]\n"), "none");
  EXPECT_EQ(selected_scheduler("none\n"), "none");
}

TEST(TuneCore, Profiles) {
  EXPECT_EQ(parse_tune_profile("latency"), TuneProfile::kLatency);
  EXPECT_EQ(parse_tune_profile("throughput"), TuneProfile::kThroughput);
  EXPECT_EQ(parse_tune_profile("balanced"), TuneProfile::kBalanced);
  EXPECT_FALSE(parse_tune_profile("Latency"));
}

TEST(TuneCore, DefaultsFileRoundTripAndConnectUse) {
  const std::string text = render_tune_defaults({{"nr_io_queues", 8}, {"queue_size", 128}}, TuneProfile::kLatency);
  EXPECT_EQ(parse_tune_defaults(text), (std::map<std::string, int>{{"nr_io_queues", 8}, {"queue_size", 128}}));
  EXPECT_EQ(parse_tune_defaults("nr_io_queues = 4\nbogus=1\nqueue_size=x\n# nr_poll_queues=2\n"),
            (std::map<std::string, int>{{"nr_io_queues", 4}}));
  ConnectOptions o;
  o.nqn = "nqn.2024-01.io.rnvme:t";
  o.queue_size = 64;
  auto filled = apply_tune_defaults(o, {{"nr_io_queues", 8}, {"queue_size", 128}, {"nr_poll_queues", 2}});
  EXPECT_EQ(filled, (std::vector<std::string>{"nr_io_queues=8", "nr_poll_queues=2"}));
  EXPECT_EQ(o.queue_size, 64);
  EXPECT_EQ(o.nr_io_queues, 8);
  ConnectOptions disc;
  disc.nqn = std::string(kDiscoveryNqn);
  EXPECT_TRUE(apply_tune_defaults(disc, {{"nr_io_queues", 8}}).empty());
  EXPECT_FALSE(disc.nr_io_queues);
}

TEST(TuneCore, StateRoundTripAndDamage) {
  TuneState s;
  s.profile = "latency";
  s.ctrls = {"nvme0"};
  s.entries.push_back({"file", "/sys/block/nvme0n1/queue/nomerges", "nvme0n1 nomerges", "0\n", "0"});
  s.entries.push_back({"defaults", kTuneDefaultsPath, "connect defaults", std::nullopt, ""});
  auto back = parse_tune_state(to_json(s).dump());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->profile, "latency");
  ASSERT_EQ(back->entries.size(), 2u);
  EXPECT_EQ(back->entries[0].original, "0\n");
  EXPECT_FALSE(back->entries[1].original);
  EXPECT_TRUE(back->find("defaults", kTuneDefaultsPath));
  EXPECT_FALSE(parse_tune_state("{").ok());
  EXPECT_FALSE(parse_tune_state(R"({"version":1,"profile":"fast","ctrls":[],"entries":[]})").ok());
  EXPECT_FALSE(parse_tune_state(R"({"version":2})").ok());
}

TuneFacts small_host() {
  TuneFacts f;
  f.cpus = 6;
  f.ctrls.push_back({"nvme0", "rnvme", "mlx5_0", {"nvme0n1"}});
  TuneNamespaceFacts ns;
  ns.name = "nvme0n1";
  ns.queue_dir = "/sys/block/nvme0n1/queue";
  ns.attrs = {{"scheduler", "[none] mq-deadline\n"}, {"nomerges", "0\n"}, {"rq_affinity", "1\n"},
              {"read_ahead_kb", "128\n"}};
  f.namespaces.push_back(ns);
  TuneDeviceFacts d;
  d.name = "mlx5_0";
  d.numa_node = 0;
  d.local_cpus = {0, 2, 4};
  d.irqs = {{41, "mlx5_comp1", 1, "0-5\n"}, {40, "mlx5_comp0", 0, "0-5\n"}};
  d.moderation = true;
  d.ports = {1};
  d.configfs = true;
  f.devices.push_back(d);
  return f;
}

TEST(TuneCore, EveryProfileHasTheSameKnobs) {
  const auto f = small_host();
  const auto a = plan_tune(f, TuneProfile::kLatency);
  const auto b = plan_tune(f, TuneProfile::kThroughput);
  const auto c = plan_tune(f, TuneProfile::kBalanced);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(a.size(), c.size());
  for (size_t i = 0; i < a.size(); i++) {
    EXPECT_EQ(a[i].scope + a[i].name, b[i].scope + b[i].name);
    EXPECT_EQ(a[i].scope + a[i].name, c[i].scope + c[i].name);
    EXPECT_FALSE(a[i].why.empty()) << a[i].name;
    EXPECT_FALSE(a[i].source.empty()) << a[i].name;
  }
}

TEST(TuneCore, LatencyValues) {
  auto f = small_host();
  std::map<std::string, std::optional<std::string>> t;
  for (const auto& k : plan_tune(f, TuneProfile::kLatency)) t[k.scope + " " + k.name] = k.target;
  EXPECT_EQ(t["nvme0n1 scheduler"], "none");
  EXPECT_EQ(t["nvme0n1 nomerges"], "2");
  EXPECT_EQ(t["nvme0n1 rq_affinity"], "2");
  EXPECT_FALSE(t["nvme0n1 read_ahead_kb"]);
  // vectors in vector order over the local CPUs
  EXPECT_EQ(t["mlx5_0 irq 40 smp_affinity_list"], "0");
  EXPECT_EQ(t["mlx5_0 irq 41 smp_affinity_list"], "2");
  EXPECT_EQ(t["mlx5_0 adaptive_moderation"], "off");
  EXPECT_FALSE(t["mlx5_0 default_roce_tos port 1"]);  // no lossless class
  EXPECT_EQ(t["connect nr_io_queues"], "6");
  EXPECT_EQ(t["connect nr_poll_queues"], "4");
  EXPECT_EQ(t["connect queue_size"], "128");
  f.cpus = 2;
  for (const auto& k : plan_tune(f, TuneProfile::kLatency)) {
    if (k.name == "nr_poll_queues") {
      EXPECT_EQ(k.target, "2");
    }
  }
}

TEST(TuneCore, LosslessTosFromDscpTrust) {
  DcbState d;
  d.support = DcbState::kPresent;
  EXPECT_FALSE(lossless_tos(d).tos);
  d.pfc_en = 1u << 3;
  EXPECT_FALSE(lossless_tos(d).tos);  // PCP trust
  d.apps.push_back({5, 1, 10});       // DSCP 10 -> priority 1: no PFC there
  d.apps.push_back({5, 3, 26});
  auto l = lossless_tos(d);
  ASSERT_TRUE(l.tos);
  EXPECT_EQ(*l.tos, 104);
  DcbState none;
  none.support = DcbState::kAbsent;
  EXPECT_NE(lossless_tos(none).how.find("no DCB"), std::string::npos);
}

}  // namespace
}  // namespace rnvme
