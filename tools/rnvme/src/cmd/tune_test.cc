// `rnvme tune` against the sysfs/procfs layouts of real hosts (testdata/tune/<host>: ConnectX-6
// mlx5, E810 irdma, Broadcom bnxt_re, Soft-RoCE), with a fake that behaves like sysfs on write.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "cmd/commands.h"
#include "core/tune.h"
#include "sys/fabric_probe.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace rnvme::testing;
using nlohmann::json;

// Loads testdata/tune/<host>: every file at its path; a ".dir" file stands for its (otherwise
// empty) directory.
void load_layout(FakeFileSystem& fs, const std::string& host) {
  const std::filesystem::path root = std::filesystem::path(RNVME_TESTDATA_DIR) / "tune" / host;
  ASSERT_TRUE(std::filesystem::is_directory(root)) << root;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = "/" + std::filesystem::relative(e.path(), root).generic_string();
    if (e.path().filename() == ".dir") {
      fs.add_dir(rel.substr(0, rel.rfind('/')));
      continue;
    }
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    fs.add(rel, ss.str());
  }
}

// What sysfs does with a write: queue/scheduler shows the choice in brackets among the others,
// other attributes read back the value with a newline.
std::string sysfs_write(const std::string& path, const std::string& old, std::string_view data) {
  std::string v(data);
  while (!v.empty() && v.back() == '\n') v.pop_back();
  if (path.size() > 10 && path.compare(path.size() - 10, 10, "/scheduler") == 0) {
    std::istringstream in(old);
    std::string w, out;
    while (in >> w) {
      if (w.front() == '[') w = w.substr(1, w.size() - 2);
      if (!out.empty()) out += ' ';
      out += w == v ? "[" + w + "]" : w;
    }
    return out + "\n";
  }
  return v + "\n";
}

size_t hash_tree(const FakeFileSystem& fs) {
  size_t h = 0;
  for (const auto& [p, c] : fs.files()) h = h * 31 + std::hash<std::string>{}(p + "\n" + c);
  for (const auto& d : fs.dirs()) h = h * 31 + std::hash<std::string>{}(d);
  return h;
}

class TuneTest : public ::testing::Test {
 protected:
  void host(const std::string& name) {
    load_layout(env.fs, name);
    env.fs.on_write = sysfs_write;
    env.fs.on_mkdir = [](FakeFileSystem& fs, const std::string& path) {
      // configfs makes a group's attributes when it is created
      if (path.rfind("/sys/kernel/config/rdma_cm/", 0) == 0) {
        fs.add(path + "/ports/1/default_roce_tos", "0\n");
        fs.add(path + "/ports/1/default_roce_mode", "RoCE v2\n");
      }
    };
    RdmaDevice d;
    RdmaPort p;
    p.index = 1;
    p.state = "ACTIVE";
    if (name == "mlx5-connectx6") {
      d.name = "mlx5_0";
      p.netdev = "ens1f0np0";
      env.netlink.dim["mlx5_0"] = true;
      DcbState dcb;
      dcb.support = DcbState::kPresent;
      dcb.has_pfc = true;
      dcb.pfc_en = 1u << 3;
      dcb.apps.push_back({5, 3, 26});  // DSCP 26 -> priority 3
      probe.dcbs["ens1f0np0"] = dcb;
    } else if (name == "e810-irdma") {
      d.name = "irdma0";
      p.netdev = "ens2f0";
      env.netlink.dim["irdma0"] = true;
      DcbState dcb;  // PFC on 3, but PCP trust: the ToS does not pick the class
      dcb.support = DcbState::kPresent;
      dcb.has_pfc = true;
      dcb.pfc_en = 1u << 3;
      probe.dcbs["ens2f0"] = dcb;
    } else if (name == "bnxt-re") {
      d.name = "bnxt_re0";
      p.netdev = "ens3f0np0";  // no DIM reported, no DCB
    } else {
      add_rxe(env, "192.168.50.1");
      env.netlink.dim["rxe0"] = false;
      env.netlink.dim_refusals["rxe0"] = EOPNOTSUPP;
      return;
    }
    d.index = 0;
    d.ports.push_back(p);
    env.netlink.devs.push_back(d);
  }

  Status run(TuneArgs a) { return run_tune(env.ctx, probe, a); }
  Status apply(const std::string& profile, std::vector<std::string> ctrls = {}, bool best_effort = false) {
    TuneArgs a;
    a.action = "apply";
    a.profile = profile;
    a.ctrls = std::move(ctrls);
    a.best_effort = best_effort;
    return run(a);
  }
  Status revert() {
    TuneArgs a;
    a.action = "revert";
    return run(a);
  }
  json show_json(const std::string& profile = "") {
    TuneArgs a;
    a.action = "show";
    a.profile = profile;
    env.out.str("");
    env.json();
    EXPECT_TRUE(run(a).ok());
    env.printer.set_format(Format::kText);
    json j = json::parse(env.out.str());
    env.out.str("");
    return j;
  }
  // path -> target of the knobs show says the profile changes
  std::map<std::string, std::string> promised(const std::string& profile) {
    std::map<std::string, std::string> out;
    const json j = show_json(profile);
    for (const auto& k : j["knobs"])
      if (!k["target"].is_null() && k["target"] != k["current"]) out[k["path"]] = k["target"];
    return out;
  }
  const json* knob(const json& j, const std::string& scope, const std::string& name) {
    for (const auto& k : j["knobs"])
      if (k["scope"] == scope && k["knob"] == name) return &k;
    return nullptr;
  }

  TestEnv env;
  FakeFabricProbe probe;
};

TEST_F(TuneTest, Mlx5ShowsEveryKnobWithProfileValuesAndSources) {
  host("mlx5-connectx6");
  json j = show_json("latency");
  EXPECT_EQ(j["profile"], "latency");
  const json* s = knob(j, "nvme0c0n1", "scheduler");
  ASSERT_TRUE(s);
  EXPECT_EQ((*s)["current"], "mq-deadline");
  EXPECT_EQ((*s)["target"], "none");
  EXPECT_EQ((*s)["profiles"]["throughput"], "none");
  EXPECT_NE((*s)["source"].get<std::string>().find("queue-sysfs.rst"), std::string::npos);
  EXPECT_EQ((*knob(j, "nvme0c0n1", "nomerges"))["target"], "2");
  EXPECT_EQ((*knob(j, "nvme0c0n1", "nomerges"))["profiles"]["throughput"], "0");
  EXPECT_EQ((*knob(j, "nvme0c0n1", "rq_affinity"))["target"], "2");
  EXPECT_TRUE((*knob(j, "nvme0c0n1", "io_poll"))["target"].is_null());
  EXPECT_NE((*knob(j, "nvme0c0n1", "io_poll"))["why"].get<std::string>().find("read-only"), std::string::npos);
  EXPECT_EQ((*knob(j, "nvme0c0n1", "read_ahead_kb"))["profiles"]["throughput"], "4096");
  ASSERT_TRUE(knob(j, "nvme0n1", "read_ahead_kb"));  // the multipath head too
  // completion vectors 0-4 of this PF only (not async, not the other PF's), over node 1's CPUs
  std::vector<std::string> irqs;
  for (const auto& k : j["knobs"])
    if (k["knob"] == "smp_affinity_list") irqs.push_back(k["scope"].get<std::string>() + "=" + k["target"].get<std::string>());
  EXPECT_EQ(irqs, (std::vector<std::string>{"mlx5_0 irq 59=4", "mlx5_0 irq 60=5", "mlx5_0 irq 61=6",
                                            "mlx5_0 irq 62=7", "mlx5_0 irq 63=4"}));
  EXPECT_EQ((*knob(j, "mlx5_0", "adaptive_moderation"))["current"], "on");
  EXPECT_EQ((*knob(j, "mlx5_0", "adaptive_moderation"))["target"], "off");
  EXPECT_EQ((*knob(j, "mlx5_0", "adaptive_moderation"))["profiles"]["throughput"], "on");
  // DSCP 26 -> priority 3 with PFC: ToS 104
  EXPECT_EQ((*knob(j, "mlx5_0", "default_roce_tos port 1"))["target"], "104");
  EXPECT_EQ((*knob(j, "connect", "nr_io_queues"))["target"], "8");
  EXPECT_EQ((*knob(j, "connect", "nr_poll_queues"))["target"], "4");
  EXPECT_EQ((*knob(j, "connect", "nr_poll_queues"))["profiles"]["throughput"], "0");
  EXPECT_EQ((*knob(j, "connect", "queue_size"))["target"], "128");
  // the PCIe controller nvme1 is not an RDMA controller
  EXPECT_EQ(j["knobs"].dump().find("nvme1"), std::string::npos);
  EXPECT_TRUE(env.fs.writes.empty());
}

TEST_F(TuneTest, E810PicksIrdmaCeqVectorsNotTheNetdevQueuesAndLeavesTosUnderPcpTrust) {
  host("e810-irdma");
  json j = show_json("latency");
  std::vector<std::string> irqs;
  for (const auto& k : j["knobs"])
    if (k["knob"] == "smp_affinity_list") irqs.push_back(k["scope"].get<std::string>() + "=" + k["target"].get<std::string>());
  EXPECT_EQ(irqs, (std::vector<std::string>{"irdma0 irq 120=0", "irdma0 irq 121=1", "irdma0 irq 122=2",
                                            "irdma0 irq 123=3"}));
  const json* tos = knob(j, "irdma0", "default_roce_tos port 1");
  ASSERT_TRUE(tos);
  EXPECT_TRUE((*tos)["target"].is_null());
  EXPECT_NE((*tos)["why"].get<std::string>().find("PCP trust"), std::string::npos) << (*tos)["why"];
  EXPECT_EQ((*knob(j, "connect", "nr_io_queues"))["target"], "16");
}

TEST_F(TuneTest, BnxtReVectorsByPciAddressAndModerationLeftAloneWhenNotReported) {
  host("bnxt-re");
  json j = show_json("latency");
  std::vector<std::string> irqs;
  for (const auto& k : j["knobs"])
    if (k["knob"] == "smp_affinity_list") irqs.push_back(k["scope"].get<std::string>() + "=" + k["target"].get<std::string>());
  EXPECT_EQ(irqs, (std::vector<std::string>{"bnxt_re0 irq 200=8", "bnxt_re0 irq 201=9", "bnxt_re0 irq 202=10"}));
  const json* m = knob(j, "bnxt_re0", "adaptive_moderation");
  ASSERT_TRUE(m);
  EXPECT_TRUE((*m)["target"].is_null());
  EXPECT_TRUE((*knob(j, "bnxt_re0", "default_roce_tos port 1"))["target"].is_null());
}

TEST_F(TuneTest, SoftRoceHasNoIrqsAndIsFoundThroughTheSourceAddress) {
  host("rxe");
  TuneArgs a;
  a.action = "show";
  a.profile = "latency";
  ASSERT_TRUE(run(a).ok());
  const std::string out = env.out.str();
  EXPECT_NE(out.find("nvme0: nvme_rdma controller, RDMA device rxe0"), std::string::npos) << out;
  EXPECT_NE(out.find("no completion-vector IRQs (software device)"), std::string::npos) << out;
  // latency on Soft-RoCE: moderation and ToS are left alone, so apply needs no --best-effort
  ASSERT_TRUE(apply("latency").ok());
  for (const auto& c : env.netlink.calls) EXPECT_EQ(c.rfind("dim", 0), std::string::npos) << c;
}

// rnvme.ko loaded with transport_name=rnvme beside nvme_rdma: its controllers say "rnvme" in
// their transport attribute and are tuned like the others (make bench's setup)
TEST_F(TuneTest, RnvmeControllerUnderItsOwnTransportNameIsTuned) {
  host("rxe");
  env.fs.add("/sys/class/nvme/nvme0/transport", "rnvme\n");
  env.fs.add("/sys/class/nvme/nvme0/rnvme/rdma_device", "rxe0\n");
  ASSERT_TRUE(apply("latency").ok());
  bool nomerges = false;
  for (const auto& w : env.fs.writes)
    if (w.first.find("/nomerges") != std::string::npos) nomerges = true;
  EXPECT_TRUE(nomerges);
  ASSERT_TRUE(apply("latency", {"nvme0"}).ok());
  // another transport that is not RDMA stays out
  env.fs.add("/sys/class/nvme/nvme0/transport", "tcp\n");
  ASSERT_TRUE(env.fs.remove_dir("/sys/class/nvme/nvme0/rnvme").ok());
  Status s = apply("latency", {"nvme0"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("not an NVMe-oF RDMA controller"), std::string::npos);
}

TEST_F(TuneTest, DryRunChangesNothing) {
  host("mlx5-connectx6");
  const size_t before = hash_tree(env.fs);
  env.ctx.dry_run = true;
  ASSERT_TRUE(apply("latency").ok());
  EXPECT_EQ(hash_tree(env.fs), before);
  EXPECT_TRUE(env.fs.writes.empty());
  EXPECT_TRUE(env.netlink.calls.empty());
  EXPECT_NE(env.out.str().find("would set"), std::string::npos);
}

TEST_F(TuneTest, ApplySetsExactlyWhatShowPromisedThenRevertRestoresByteForByte) {
  host("mlx5-connectx6");
  const auto files_before = env.fs.files();
  const auto dirs_before = env.fs.dirs();
  const auto want = promised("latency");
  ASSERT_FALSE(want.empty());
  ASSERT_TRUE(apply("latency").ok());
  // every file the plan named, and nothing else but the state file and the rdma_cm group
  std::map<std::string, std::string> written;
  for (const auto& [p, v] : env.fs.writes) written[p] = v;
  for (const auto& [path, target] : want) {
    if (path == kTuneDefaultsPath || path == "mlx5_0") continue;
    ASSERT_TRUE(written.count(path)) << path;
    EXPECT_EQ(written[path], target) << path;
  }
  std::set<std::string> extra;
  for (const auto& [p, v] : written)
    if (!want.count(p)) extra.insert(p);
  EXPECT_EQ(extra, (std::set<std::string>{kTuneStatePath, "/sys/kernel/config/rdma_cm/mlx5_0"}));
  EXPECT_EQ(*env.fs.read("/sys/block/nvme0c0n1/queue/scheduler"), "mq-deadline kyber [none]\n");
  EXPECT_EQ(*env.fs.read("/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos"), "104\n");
  EXPECT_EQ(env.netlink.dim["mlx5_0"], false);
  EXPECT_EQ(parse_tune_defaults(*env.fs.read(kTuneDefaultsPath)),
            (std::map<std::string, int>{{"nr_io_queues", 8}, {"nr_poll_queues", 4}, {"queue_size", 128}}));
  // show now finds nothing to change
  const json after = show_json("latency");
  for (const auto& k : after["knobs"]) {
    if (!k["target"].is_null()) {
      EXPECT_EQ(k["target"], k["current"]) << k.dump();
    }
  }

  ASSERT_TRUE(revert().ok());
  EXPECT_EQ(env.fs.files(), files_before);
  EXPECT_EQ(env.fs.dirs(), dirs_before);
  EXPECT_EQ(env.netlink.dim["mlx5_0"], true);
  EXPECT_FALSE(env.fs.exists(kTuneStatePath));
}

TEST_F(TuneTest, SecondApplyWritesNothingAndTheStateKeepsTheOriginals) {
  host("mlx5-connectx6");
  ASSERT_TRUE(apply("latency").ok());
  const std::string state = *env.fs.read(kTuneStatePath);
  EXPECT_NE(state.find("[mq-deadline] kyber none\\n"), std::string::npos) << state;
  const size_t writes = env.fs.writes.size();
  const size_t calls = env.netlink.calls.size();
  env.out.str("");
  ASSERT_TRUE(apply("latency").ok());
  EXPECT_EQ(env.fs.writes.size(), writes);
  EXPECT_EQ(env.netlink.calls.size(), calls);
  EXPECT_EQ(*env.fs.read(kTuneStatePath), state);
  EXPECT_NE(env.out.str().find("nothing to change"), std::string::npos);
}

TEST_F(TuneTest, AnotherProfileOnTopKeepsTheFirstOriginalsAndRevertGoesBackToThem) {
  host("mlx5-connectx6");
  const auto files_before = env.fs.files();
  ASSERT_TRUE(apply("latency").ok());
  ASSERT_TRUE(apply("throughput").ok());
  auto st = parse_tune_state(*env.fs.read(kTuneStatePath));
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->profile, "throughput");
  const auto* nm = st->find("file", "/sys/block/nvme0c0n1/queue/nomerges");
  ASSERT_TRUE(nm);
  EXPECT_EQ(nm->original, "0\n");  // from before latency, not latency's 2
  EXPECT_EQ(*env.fs.read("/sys/block/nvme0c0n1/queue/read_ahead_kb"), "4096\n");
  ASSERT_TRUE(revert().ok());
  EXPECT_EQ(env.fs.files(), files_before);
}

TEST_F(TuneTest, FailurePartWayRollsBackAndNamesTheKnob) {
  host("mlx5-connectx6");
  const auto files_before = env.fs.files();
  const auto dirs_before = env.fs.dirs();
  env.fs.write_errors["/proc/irq/61/smp_affinity_list"] = EIO;  // a managed IRQ
  Status st = apply("latency");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("mlx5_0 irq 61 smp_affinity_list"), std::string::npos) << st.error().message;
  EXPECT_NE(st.error().cause.find("put back"), std::string::npos) << st.error().cause;
  EXPECT_NE(exit_code(st.error().code), 0);
  EXPECT_EQ(env.fs.files(), files_before);
  EXPECT_EQ(env.fs.dirs(), dirs_before);
  EXPECT_FALSE(env.fs.exists(kTuneStatePath));
}

TEST_F(TuneTest, BestEffortReportsTheRefusedKnobAndAppliesTheRest) {
  host("mlx5-connectx6");
  const auto files_before = env.fs.files();
  env.fs.write_errors["/proc/irq/61/smp_affinity_list"] = EIO;
  env.netlink.dim_refusals["mlx5_0"] = EOPNOTSUPP;
  env.json();
  ASSERT_TRUE(apply("latency", {}, true).ok());
  json j = json::parse(env.out.str());
  EXPECT_EQ((*knob(j, "mlx5_0 irq 61", "smp_affinity_list"))["status"].get<std::string>().rfind("refused", 0), 0u);
  EXPECT_EQ((*knob(j, "mlx5_0", "adaptive_moderation"))["status"].get<std::string>().rfind("refused", 0), 0u);
  EXPECT_EQ((*knob(j, "mlx5_0 irq 62", "smp_affinity_list"))["status"], "set");
  EXPECT_EQ(*env.fs.read("/proc/irq/62/smp_affinity_list"), "7\n");
  auto st = parse_tune_state(*env.fs.read(kTuneStatePath));
  ASSERT_TRUE(st.ok());
  EXPECT_FALSE(st->find("file", "/proc/irq/61/smp_affinity_list"));  // nothing replaced there
  EXPECT_FALSE(st->find("moderation", "mlx5_0"));
  env.fs.write_errors.clear();
  ASSERT_TRUE(revert().ok());
  EXPECT_EQ(env.fs.files(), files_before);
}

TEST_F(TuneTest, RevertTwiceSaysNothingToRevert) {
  host("mlx5-connectx6");
  ASSERT_TRUE(apply("balanced").ok());
  ASSERT_TRUE(revert().ok());
  env.out.str("");
  const size_t writes = env.fs.writes.size();
  ASSERT_TRUE(revert().ok());
  EXPECT_EQ(env.out.str(), "nothing to revert\n");
  EXPECT_EQ(env.fs.writes.size(), writes);
}

TEST_F(TuneTest, BadInputChangesNothing) {
  host("mlx5-connectx6");
  const size_t before = hash_tree(env.fs);
  Status a = apply("fastest");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().code, ErrorCode::kUsage);
  EXPECT_NE(a.error().message.find("unknown profile 'fastest'"), std::string::npos);
  Status b = apply("latency", {"nvme7"});
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().code, ErrorCode::kNotFound);
  EXPECT_NE(b.error().message.find("nvme7"), std::string::npos);
  Status c = apply("latency", {"nvme1"});  // PCIe
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("not an NVMe-oF RDMA controller"), std::string::npos);
  Status d = apply("latency", {"sda"});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, ErrorCode::kUsage);
  TuneArgs r;
  r.action = "apply";
  r.profile = "latency";
  r.reconnect = true;
  Status e = run(r);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("not yet"), std::string::npos);
  EXPECT_EQ(hash_tree(env.fs), before);
  EXPECT_TRUE(env.fs.writes.empty());
  EXPECT_TRUE(env.netlink.calls.empty());
}

TEST_F(TuneTest, StateFileThatCannotBeWrittenChangesNothing) {
  host("mlx5-connectx6");
  const size_t before = hash_tree(env.fs);
  env.fs.write_errors[kTuneStatePath] = EROFS;
  ASSERT_FALSE(apply("latency").ok());
  EXPECT_EQ(hash_tree(env.fs), before);
  EXPECT_TRUE(env.netlink.calls.empty());
}

TEST_F(TuneTest, FromStateReappliesTheNamespaceKnobsOfOneDevice) {
  host("mlx5-connectx6");
  TuneArgs u;
  u.action = "apply";
  u.from_state = true;
  u.ctrls = {"nvme0n1"};
  ASSERT_TRUE(run(u).ok());  // no state: nothing to do, no error
  EXPECT_TRUE(env.fs.writes.empty());

  ASSERT_TRUE(apply("latency").ok());
  const std::string state = *env.fs.read(kTuneStatePath);
  // a reconnect brings the namespace back with the kernel's defaults
  env.fs.add("/sys/block/nvme0c0n1/queue/scheduler", "[mq-deadline] kyber none\n");
  env.fs.add("/sys/block/nvme0c0n1/queue/nomerges", "0\n");
  env.fs.add("/proc/irq/59/smp_affinity_list", "0-7\n");  // not a namespace knob: stays
  env.fs.writes.clear();
  u.ctrls = {"/dev/nvme0n1"};  // the head brings its paths along
  ASSERT_TRUE(run(u).ok());
  std::set<std::string> paths;
  for (const auto& [p, v] : env.fs.writes) paths.insert(p);
  EXPECT_EQ(paths, (std::set<std::string>{"/sys/block/nvme0c0n1/queue/scheduler",
                                          "/sys/block/nvme0c0n1/queue/nomerges"}));
  EXPECT_EQ(*env.fs.read("/proc/irq/59/smp_affinity_list"), "0-7\n");
  EXPECT_EQ(*env.fs.read(kTuneStatePath), state);  // originals kept

  TuneArgs boot;
  boot.action = "apply";
  boot.from_state = true;
  ASSERT_TRUE(run(boot).ok());
  EXPECT_EQ(*env.fs.read("/proc/irq/59/smp_affinity_list"), "4\n");
}

TEST_F(TuneTest, ExportTunedWritesTheBlockQueueSettings) {
  host("mlx5-connectx6");
  TuneArgs a;
  a.action = "export-tuned";
  a.profile = "throughput";
  a.dir = "/etc/tuned/rnvme-throughput";
  ASSERT_TRUE(run(a).ok());
  auto conf = env.fs.read("/etc/tuned/rnvme-throughput/tuned.conf");
  ASSERT_TRUE(conf.ok());
  EXPECT_NE(conf->find("include=throughput-performance"), std::string::npos);
  EXPECT_NE(conf->find("[cpu]"), std::string::npos);
  EXPECT_NE(conf->find("[disk]"), std::string::npos);
  EXPECT_NE(conf->find("[sysfs]\n"), std::string::npos);
  EXPECT_NE(conf->find("/sys/block/nvme0c0n1/queue/read_ahead_kb=4096\n"), std::string::npos) << *conf;
  EXPECT_NE(conf->find("/sys/block/nvme0c0n1/queue/nomerges=0\n"), std::string::npos);
  EXPECT_EQ(conf->find("/proc/irq"), std::string::npos);
}

TEST_F(TuneTest, ShowTextNamesCurrentTargetAndSource) {
  host("mlx5-connectx6");
  TuneArgs a;
  a.action = "show";
  a.ctrls = {"nvme0"};
  ASSERT_TRUE(run(a).ok());
  const std::string out = env.out.str();
  EXPECT_NE(out.find("no profile applied; showing balanced"), std::string::npos) << out;
  EXPECT_NE(out.find("mq-deadline -> none"), std::string::npos) << out;
  EXPECT_NE(out.find("[Documentation/block/queue-sysfs.rst (nomerges)]"), std::string::npos) << out;
  EXPECT_NE(out.find("mlx5_0: NUMA node 1, local CPUs 4-7, 5 completion-vector IRQs"), std::string::npos) << out;
}

}  // namespace
}  // namespace rnvme
