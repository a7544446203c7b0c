#include "core/tune.h"

#include <fmt/format.h>
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
  for (const char* text : {R"({"version":"1"})", R"({"version":null})", R"({})"}) {
    Result<TuneState> r = TuneState{};
    EXPECT_NO_THROW(r = parse_tune_state(text)) << text;
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.error().message.find("unknown version"), std::string::npos) << r.error().message;
  }
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


TuneReconnectFacts path_ctrl(const std::string& name, std::vector<std::string> others) {
  TuneReconnectFacts c;
  c.name = name;
  c.state = "live";
  c.queue_count = 2;
  c.sqsize = 31;
  c.paths.push_back({"nvme0c" + name.substr(4) + "n1", "nvme0n1", std::move(others)});
  c.original.traddr = "192.168.50.10";
  c.original.nqn = "nqn.2024-01.io.rnvme:t";
  c.original.hostnqn = "nqn.2014-08.org.nvmexpress:uuid:6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
  c.original.ctrl_loss_tmo = -1;
  return c;
}

TEST(TuneCore, ReconnectConnectValuesAreTheDefaultsFileOnes) {
  EXPECT_EQ(tune_connect_values(6, TuneProfile::kLatency),
            (std::map<std::string, int>{{"nr_io_queues", 6}, {"nr_poll_queues", 4}, {"queue_size", 128}}));
  EXPECT_EQ(tune_connect_values(1, TuneProfile::kBalanced),
            (std::map<std::string, int>{{"nr_io_queues", 1}, {"nr_poll_queues", 1}, {"queue_size", 128}}));
  EXPECT_EQ(tune_connect_values(8, TuneProfile::kThroughput).at("nr_poll_queues"), 0);
  // the defaults knobs say the same
  auto f = small_host();
  for (const auto& k : plan_tune(f, TuneProfile::kBalanced))
    if (k.scope == "connect") {
      EXPECT_EQ(k.target, std::to_string(tune_connect_values(6, TuneProfile::kBalanced).at(k.name))) << k.name;
    }
}

TEST(TuneCore, ReconnectPlanMatchesRefusesAndOrders) {
  const auto want = tune_connect_values(4, TuneProfile::kBalanced);  // 4 + 2 poll of 128
  auto same = path_ctrl("nvme1", {"nvme2"});
  same.queue_count = 7;
  same.sqsize = 127;
  EXPECT_TRUE(reconnect_queues_match(same, want));
  auto unknown = same;
  unknown.sqsize.reset();  // unreadable: differs
  EXPECT_FALSE(reconnect_queues_match(unknown, want));

  auto alone = path_ctrl("nvme3", {});
  EXPECT_EQ(reconnect_refusal(alone),
            "nvme3 is the only live path of nvme0n1: reconnecting it would stop I/O; disconnect and "
            "connect it yourself in a maintenance window");
  auto single = path_ctrl("nvme4", {});
  single.paths[0] = {"nvme4n1", "", {}};  // no native multipath
  EXPECT_NE(reconnect_refusal(single)->find("nvme4 serves nvme4n1 without native multipath"), std::string::npos);
  auto resetting = path_ctrl("nvme5", {"nvme2"});
  resetting.state = "resetting";
  EXPECT_NE(reconnect_refusal(resetting)->find("nvme5 is resetting, not live"), std::string::npos);
  auto bad = path_ctrl("nvme6", {"nvme2"});
  bad.original.reconnect_delay = 0;  // nothing the kernel takes
  TuneReconnectFacts disc;
  disc.name = "nvme7";
  disc.discovery = true;
  auto ok = path_ctrl("nvme0", {"nvme2"});
  auto ok2 = path_ctrl("nvme8", {"nvme0"});

  const auto plan = plan_reconnect({ok, same, alone, single, resetting, bad, disc, ok2}, want);
  ASSERT_EQ(plan.size(), 8u);
  std::vector<std::string> got;
  for (const auto& r : plan) got.push_back(fmt::format("{}:{}:{}", r.ctrl, r.status, r.order));
  EXPECT_EQ(got, (std::vector<std::string>{"nvme0:would reconnect:1", "nvme1:ok:0", "nvme3:refused:0",
                                           "nvme4:refused:0", "nvme5:refused:0", "nvme6:refused:0",
                                           "nvme7:left alone:0", "nvme8:would reconnect:2"}));
  EXPECT_NE(plan[5].why.find("reconnect-delay"), std::string::npos) << plan[5].why;
  const auto& r = plan[0];
  EXPECT_EQ(r.namespaces, (std::vector<std::string>{"nvme0n1"}));
  EXPECT_EQ(r.opts.nr_io_queues, 4);
  EXPECT_EQ(r.opts.nr_poll_queues, 2);
  EXPECT_EQ(r.opts.queue_size, 128);
  EXPECT_EQ(r.opts.ctrl_loss_tmo, -1);  // kept
  EXPECT_EQ(r.restore.nr_io_queues, 1);
  EXPECT_EQ(r.restore.nr_poll_queues, 0);
  EXPECT_EQ(r.restore.queue_size, 32);
  EXPECT_EQ(r.options,
            "transport=rdma,traddr=192.168.50.10,trsvcid=4420,nqn=nqn.2024-01.io.rnvme:t,hostnqn=nqn.2014-08."
            "org.nvmexpress:uuid:6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b,queue_size=128,nr_io_queues=4,"
            "nr_poll_queues=2,ctrl_loss_tmo=-1");
  EXPECT_EQ(r.why, "1 I/O queues, queue_size 32 -> 6 I/O queues (2 poll), queue_size 128; I/O to nvme0n1 goes "
                   "on through the other paths meanwhile");
  // secrets never reach the printed strings
  auto keyed = path_ctrl("nvme9", {"nvme0"});
  keyed.original.dhchap_secret = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
  const auto k = plan_reconnect({keyed}, want).at(0);
  EXPECT_EQ(k.status, "would reconnect");
  EXPECT_EQ(k.opts.dhchap_secret, keyed.original.dhchap_secret);
  EXPECT_EQ(k.options.find("AAECAw"), std::string::npos) << k.options;
  EXPECT_EQ(k.restore_options.find("AAECAw"), std::string::npos);
}

}  // namespace
}  // namespace rnvme
