// `rnvme tune` against the sysfs/procfs layouts of real hosts (testdata/tune/<host>: ConnectX-6
// mlx5, E810 irdma, Broadcom bnxt_re, Soft-RoCE), with a fake that behaves like sysfs on write.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "cmd/commands.h"
#include "core/tune.h"
#include "sys/fabric_probe.h"
#include "sys/sysfs.h"
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
  r.from_state = true;
  r.reconnect = true;  // --from-state (udev, boot) never re-creates controllers
  Status e = run(r);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, ErrorCode::kUsage);
  EXPECT_NE(e.error().message.find("--from-state does not reconnect"), std::string::npos);
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


// ------------------------------------------------------------------ apply --reconnect

// A fake kernel for --reconnect: NVMe-oF RDMA controllers in sysfs as Linux 6.1 shows them
// (nvme_rdma: host_traddr in the address only when given, "off" for ctrl_loss_tmo -1), native
// multipath heads and their paths, delete_controller, and /dev/nvme-fabrics making a controller
// whose namespaces' paths appear a while after the create (the scan is asynchronous). The clock
// moves only when the tool sleeps. Every delete checks that the namespaces it served still had
// another live path.
class TuneReconnectTest : public TuneTest {
 protected:
  struct Ctrl {
    std::string name;       // nvme0
    int subsys = 0;         // nvme-subsysN, NQN kSubnqn for 0, "<kSubnqn>-N" otherwise
    std::string traddr = "192.168.50.10";
    std::string host_traddr = "192.168.50.1";  // "": not given at connect
    std::string loss = "off";
    std::string fast = "off";
    std::string delay = "10";
    std::string kato = "5";
    int queue_count = 2;    // 1 I/O queue
    int sqsize = 31;        // queue_size 32
    std::string state = "live";
  };

  void SetUp() override {
    env.fs.on_write = sysfs_write;
    env.fs.add("/sys/devices/system/cpu/online", "0-3\n");  // balanced: 4 I/O + 2 poll queues of 128
    env.fs.after_write = [this](FakeFileSystem& fs, const std::string& path, std::string_view) {
      const std::string suffix = "/delete_controller";
      if (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
        kernel_delete(fs, path.substr(kNvmeClassLen, path.size() - kNvmeClassLen - suffix.size()));
    };
    env.fabrics.handler = [this](const std::string& o) { return kernel_create(o); };
    clock.now = [this] { return t; };
    clock.sleep = [this](double s) {
      t += s;
      scan();
    };
  }

  static std::string nqn_of(int subsys) {
    return subsys == 0 ? std::string(kSubnqn) : fmt::format("{}-{}", kSubnqn, subsys);
  }
  // nvme0c3n1 with native multipath, nvme3n1 without
  std::string path_name(const std::string& ctrl, int subsys, int nsid) const {
    const int inst = *controller_instance(ctrl);
    return multipath ? fmt::format("nvme{}c{}n{}", subsys, inst, nsid) : fmt::format("nvme{}n{}", inst, nsid);
  }
  void add_queue(const std::string& dev) {
    const std::string q = "/sys/block/" + dev + "/queue/";
    env.fs.add(q + "scheduler", "[none] mq-deadline kyber\n");
    env.fs.add(q + "nomerges", "0\n");
    env.fs.add(q + "rq_affinity", "1\n");
    env.fs.add(q + "read_ahead_kb", "128\n");
    env.fs.add(q + "nr_requests", "127\n");
    env.fs.add(q + "io_poll", "0\n");
  }
  void add_path(const std::string& ctrl, int subsys) {
    const std::string p = path_name(ctrl, subsys, 1);
    env.fs.add(fmt::format("/sys/class/nvme/{}/{}/dev", ctrl, p), "259:1\n");
    add_queue(p);
    if (multipath) {
      const std::string head = fmt::format("nvme{}n1", subsys);
      env.fs.add_dir(fmt::format("/sys/class/nvme-subsystem/nvme-subsys{}/{}", subsys, head));
      if (!env.fs.exists("/sys/block/" + head)) add_queue(head);
    }
  }
  void add_ctrl(const Ctrl& c, bool paths = true) {
    const std::string d = "/sys/class/nvme/" + c.name;
    env.fs.add(d + "/transport", "rdma\n");
    env.fs.add(d + "/address", c.host_traddr.empty()
                                   ? fmt::format("traddr={},trsvcid=4420\n", c.traddr)
                                   : fmt::format("traddr={},trsvcid=4420,host_traddr={}\n", c.traddr, c.host_traddr));
    env.fs.add(d + "/state", c.state + "\n");
    env.fs.add(d + "/subsysnqn", nqn_of(c.subsys) + "\n");
    env.fs.add(d + "/hostnqn", std::string(kHostnqn) + "\n");
    env.fs.add(d + "/hostid", std::string(kHostUuid) + "\n");
    env.fs.add(d + "/cntlid", fmt::format("{}\n", ++cntlid));
    env.fs.add(d + "/queue_count", fmt::format("{}\n", c.queue_count));
    env.fs.add(d + "/sqsize", fmt::format("{}\n", c.sqsize));
    env.fs.add(d + "/ctrl_loss_tmo", c.loss + "\n");
    env.fs.add(d + "/reconnect_delay", c.delay + "\n");
    env.fs.add(d + "/fast_io_fail_tmo", c.fast + "\n");
    env.fs.add(d + "/kato", c.kato + "\n");
    env.fs.add(d + "/delete_controller", "");
    const std::string s = fmt::format("/sys/class/nvme-subsystem/nvme-subsys{}", c.subsys);
    env.fs.add(s + "/subsysnqn", nqn_of(c.subsys) + "\n");
    env.fs.add_dir(s + "/" + c.name);
    if (paths) add_path(c.name, c.subsys);
  }

  // The other live controllers with a path to `head`.
  std::vector<std::string> live_paths_of(const FakeFileSystem& fs, const std::string& head,
                                         const std::string& but) const {
    std::vector<std::string> out;
    for (const auto& c : list_or_empty(fs, "/sys/class/nvme")) {
      if (c == but || read_trim(fs, "/sys/class/nvme/" + c + "/state") != "live") continue;
      for (const auto& e : list_or_empty(fs, "/sys/class/nvme/" + c))
        if (e.find('c') != std::string::npos && e.rfind("nvme", 0) == 0 &&
            fmt::format("nvme{}n{}", e.substr(4, e.find('c') - 4), e.substr(e.rfind('n') + 1)) == head)
          out.push_back(c);
    }
    return out;
  }

  void kernel_delete(FakeFileSystem& fs, const std::string& name) {
    events.push_back("delete " + name);
    for (const auto& e : list_or_empty(fs, "/sys/class/nvme/" + name)) {
      if (!is_namespace_name(e)) continue;
      const size_t c = e.find('c');
      const std::string head = c == std::string::npos ? e : fmt::format("nvme{}n{}", e.substr(4, c - 4), e.substr(e.rfind('n') + 1));
      if (c == std::string::npos || live_paths_of(fs, head, name).empty()) events.push_back("I/O stopped on " + head);
      ASSERT_TRUE(fs.remove_dir("/sys/block/" + e).ok());
    }
    for (const auto& s : list_or_empty(fs, "/sys/class/nvme-subsystem"))
      ASSERT_TRUE(fs.remove_dir("/sys/class/nvme-subsystem/" + s + "/" + name).ok());
    ASSERT_TRUE(fs.remove_dir("/sys/class/nvme/" + name).ok());
  }

  Result<std::string> kernel_create(const std::string& options) {
    std::map<std::string, std::string> o;
    std::istringstream in(options);
    std::string tok;
    while (std::getline(in, tok, ',')) {
      const size_t eq = tok.find('=');
      o[tok.substr(0, eq)] = eq == std::string::npos ? "" : tok.substr(eq + 1);
    }
    if (refuse && refuse(options)) {
      events.push_back("refused create");
      Error e = make_error(ErrorCode::kConnect, "write to /dev/nvme-fabrics failed");
      e.sys_errno = EINVAL;
      return e;
    }
    auto num = [&](const char* k, int def) { return o.count(k) ? std::stoi(o[k]) : def; };
    Ctrl c;
    c.name = fmt::format("nvme{}", next_instance++);
    c.subsys = -1;
    for (int i = 0; i < 8; i++)
      if (nqn_of(i) == o["nqn"]) c.subsys = i;
    EXPECT_GE(c.subsys, 0) << options;
    c.traddr = o["traddr"];
    c.host_traddr = o.count("host_traddr") ? o["host_traddr"] : "";
    c.loss = !o.count("ctrl_loss_tmo") ? "600" : o["ctrl_loss_tmo"] == "-1" ? "off" : o["ctrl_loss_tmo"];
    c.fast = !o.count("fast_io_fail_tmo") || o["fast_io_fail_tmo"] == "-1" ? "off" : o["fast_io_fail_tmo"];
    c.delay = std::to_string(num("reconnect_delay", 10));
    c.kato = std::to_string(num("keep_alive_tmo", 5));
    c.queue_count = 1 + std::min(num("nr_io_queues", 4), 4) + std::min(num("nr_poll_queues", 0), 4);
    c.sqsize = num("queue_size", 128) - 1;
    c.state = new_state ? new_state(options) : "live";
    add_ctrl(c, false);
    events.push_back("create " + c.name);
    if (!no_paths || !no_paths(options)) pending.push_back({t + scan_delay, c.name, c.subsys});
    return fmt::format("instance={},cntlid={}\n", *controller_instance(c.name), cntlid);
  }

  // the asynchronous namespace scan: paths appear once their time has come
  void scan() {
    std::erase_if(pending, [&](const Pending& p) {
      if (p.at > t || !env.fs.exists("/sys/class/nvme/" + p.ctrl)) return p.at <= t;
      add_path(p.ctrl, p.subsys);
      events.push_back("paths " + p.ctrl);
      return true;
    });
  }

  Status reconnect(const std::string& profile, std::vector<std::string> ctrls = {}, bool best_effort = false) {
    TuneArgs a;
    a.action = "apply";
    a.profile = profile;
    a.ctrls = std::move(ctrls);
    a.best_effort = best_effort;
    a.reconnect = true;
    return run_tune(env.ctx, probe, a, clock);
  }
  json reconnect_json(Status& st, const std::string& profile, std::vector<std::string> ctrls = {},
                      bool best_effort = false) {
    env.out.str("");
    env.json();
    st = reconnect(profile, std::move(ctrls), best_effort);
    env.printer.set_format(Format::kText);
    json j = json::parse(env.out.str(), nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << env.out.str();
    return j;
  }
  static const json& entry(const json& j, const std::string& ctrl) {
    if (j.is_object() && j.contains("reconnects"))
      for (const auto& r : j["reconnects"])
        if (r["ctrl"] == ctrl) return r;
    ADD_FAILURE() << "no reconnect entry for " << ctrl;
    static const json none = {{"status", nullptr}, {"why", ""}, {"order", nullptr}, {"new_ctrl", nullptr},
                              {"after", {{"io_queues", nullptr}, {"queue_size", nullptr}}}};
    return none;
  }
  // what the re-create of a controller made by add_ctrl with these values writes (balanced, 4 CPUs)
  static std::string profile_options(const std::string& traddr, const std::string& host_traddr,
                                     const std::string& tail) {
    return fmt::format("transport=rdma,traddr={},trsvcid=4420,nqn={},hostnqn={},hostid={},host_traddr={},"
                       "queue_size=128,nr_io_queues=4,nr_poll_queues=2,{}",
                       traddr, kSubnqn, kHostnqn, kHostUuid, host_traddr, tail);
  }

  static constexpr size_t kNvmeClassLen = sizeof("/sys/class/nvme/") - 1;
  struct Pending {
    double at;
    std::string ctrl;
    int subsys;
  };
  bool multipath = true;
  double t = 0;
  double scan_delay = 1.0;
  int next_instance = 4;
  int cntlid = 0;
  std::vector<Pending> pending;
  std::vector<std::string> events;
  std::function<bool(const std::string&)> refuse;    // a create the kernel refuses
  std::function<bool(const std::string&)> no_paths;  // a create whose namespaces never show
  std::function<std::string(const std::string&)> new_state;
  TuneClock clock;
};

TEST_F(TuneReconnectTest, DryRunPrintsThePlanAndWritesNothing) {
  add_ctrl({.name = "nvme0"});
  add_ctrl({.name = "nvme1", .traddr = "192.168.51.10", .host_traddr = "192.168.51.1", .loss = "600"});
  const size_t before = hash_tree(env.fs);
  env.ctx.dry_run = true;
  Status st = Ok{};
  const json j = reconnect_json(st, "balanced");
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(hash_tree(env.fs), before);
  EXPECT_TRUE(env.fs.writes.empty());
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(j["reconnect"], true);
  ASSERT_EQ(j["reconnects"].size(), 2u);
  const json& a = j["reconnects"][0];
  EXPECT_EQ(a["ctrl"], "nvme0");
  EXPECT_EQ(a["order"], 1);
  EXPECT_EQ(a["status"], "would reconnect");
  EXPECT_EQ(a["namespaces"], json::array({"nvme0n1"}));
  EXPECT_EQ(a["current"]["io_queues"], 1);
  EXPECT_EQ(a["current"]["queue_size"], 32);
  EXPECT_EQ(a["target"]["io_queues"], 6);
  EXPECT_EQ(a["options"], profile_options("192.168.50.10", "192.168.50.1", "reconnect_delay=10,ctrl_loss_tmo=-1,keep_alive_tmo=5"));
  EXPECT_EQ(a["restore_options"],
            fmt::format("transport=rdma,traddr=192.168.50.10,trsvcid=4420,nqn={},hostnqn={},hostid={},"
                        "host_traddr=192.168.50.1,queue_size=32,nr_io_queues=1,"
                        "reconnect_delay=10,ctrl_loss_tmo=-1,keep_alive_tmo=5",
                        kSubnqn, kHostnqn, kHostUuid));
  const json& b = j["reconnects"][1];
  EXPECT_EQ(b["ctrl"], "nvme1");
  EXPECT_EQ(b["order"], 2);
  EXPECT_EQ(b["options"], profile_options("192.168.51.10", "192.168.51.1", "reconnect_delay=10,ctrl_loss_tmo=600,keep_alive_tmo=5"));
  EXPECT_NE(j["summary"].get<std::string>().find("2 would be re-created (nvme0 nvme1)"), std::string::npos) << j["summary"];

  // the same plan as text
  env.out.str("");
  ASSERT_TRUE(reconnect("balanced").ok());
  const std::string out = env.out.str();
  EXPECT_NE(out.find("reconnect (one controller at a time"), std::string::npos) << out;
  EXPECT_NE(out.find("  1  nvme0"), std::string::npos) << out;
  EXPECT_NE(out.find("1 I/O queues, queue_size 32 -> 6 I/O queues (2 poll), queue_size 128"), std::string::npos) << out;
  EXPECT_NE(out.find("      connect: " + profile_options("192.168.50.10", "192.168.50.1", "")), std::string::npos) << out;
  EXPECT_EQ(hash_tree(env.fs), before);
  EXPECT_TRUE(env.fabrics.written.empty());
}

TEST_F(TuneReconnectTest, MultipathPathsAreRecreatedOneAtATimeWithTheProfileQueuesAndTheirOwnOptions) {
  add_ctrl({.name = "nvme0"});
  add_ctrl({.name = "nvme1", .traddr = "192.168.51.10", .host_traddr = "192.168.51.1", .loss = "600",
            .fast = "30", .delay = "5", .kato = "15"});
  Status st = Ok{};
  const json j = reconnect_json(st, "balanced", {"nvme0", "nvme1"});
  ASSERT_TRUE(st.ok()) << st.error().message << "\n" << st.error().cause;
  // one at a time: the second is deleted only once the first's replacement serves nvme0n1
  EXPECT_EQ(events, (std::vector<std::string>{"delete nvme0", "create nvme4", "paths nvme4", "delete nvme1",
                                              "create nvme5", "paths nvme5"}));
  ASSERT_EQ(env.fabrics.written.size(), 2u);
  EXPECT_EQ(env.fabrics.written[0],
            profile_options("192.168.50.10", "192.168.50.1", "reconnect_delay=10,ctrl_loss_tmo=-1,keep_alive_tmo=5"));
  EXPECT_EQ(env.fabrics.written[1],
            profile_options("192.168.51.10", "192.168.51.1",
                            "reconnect_delay=5,ctrl_loss_tmo=600,fast_io_fail_tmo=30,keep_alive_tmo=15"));
  const json& a = entry(j, "nvme0");
  EXPECT_EQ(a["status"], "reconnected");
  EXPECT_EQ(a["new_ctrl"], "nvme4");
  EXPECT_EQ(a["after"]["io_queues"], 6);
  EXPECT_EQ(a["after"]["queue_size"], 128);
  EXPECT_EQ(entry(j, "nvme1")["new_ctrl"], "nvme5");
  EXPECT_FALSE(env.fs.exists("/sys/class/nvme/nvme0"));
  EXPECT_EQ(read_trim(env.fs, "/sys/class/nvme/nvme5/ctrl_loss_tmo"), "600");
  EXPECT_EQ(read_trim(env.fs, "/sys/class/nvme/nvme5/address"), "traddr=192.168.51.10,trsvcid=4420,host_traddr=192.168.51.1");
  // the new paths got the namespace knobs, and the state names the new controllers
  EXPECT_EQ(*env.fs.read("/sys/block/nvme0c4n1/queue/nomerges"), "1\n");
  EXPECT_EQ(*env.fs.read("/sys/block/nvme0c5n1/queue/read_ahead_kb"), "1024\n");
  auto state = parse_tune_state(*env.fs.read(kTuneStatePath));
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->ctrls, (std::vector<std::string>{"nvme4", "nvme5"}));
  EXPECT_TRUE(state->find("file", "/sys/block/nvme0c4n1/queue/nomerges"));
  EXPECT_NE(j["summary"].get<std::string>().find("2 re-created (nvme0 nvme1)"), std::string::npos) << j["summary"];
  EXPECT_GE(t, 2.0);  // it waited for each scan

  // a second run finds every controller as the profile wants and re-creates nothing
  const size_t writes = env.fabrics.written.size();
  const json again = reconnect_json(st, "balanced");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(env.fabrics.written.size(), writes);
  EXPECT_EQ(entry(again, "nvme4")["status"], "ok");
  EXPECT_NE(entry(again, "nvme4")["why"].get<std::string>().find("already as the profile wants"), std::string::npos);
}

TEST_F(TuneReconnectTest, ControllerAlreadyMatchingIsLeftAlone) {
  add_ctrl({.name = "nvme0", .queue_count = 7, .sqsize = 127});
  add_ctrl({.name = "nvme1", .traddr = "192.168.51.10", .host_traddr = "192.168.51.1"});
  Status st = Ok{};
  const json j = reconnect_json(st, "balanced");
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(events, (std::vector<std::string>{"delete nvme1", "create nvme4", "paths nvme4"}));
  EXPECT_EQ(entry(j, "nvme0")["status"], "ok");
  EXPECT_TRUE(entry(j, "nvme0")["order"].is_null());
  EXPECT_EQ(entry(j, "nvme1")["order"], 1);
  EXPECT_TRUE(env.fs.exists("/sys/class/nvme/nvme0"));
  // the same queue count with a smaller queue_size differs
  add_ctrl({.name = "nvme2", .traddr = "192.168.52.10", .queue_count = 7, .sqsize = 63});
  const json k = reconnect_json(st, "balanced", {"nvme0", "nvme2"});
  EXPECT_EQ(entry(k, "nvme0")["status"], "ok");
  EXPECT_EQ(entry(k, "nvme2")["status"], "reconnected");
}

TEST_F(TuneReconnectTest, OnlyLivePathIsRefusedAndNothingChangesWithoutBestEffort) {
  add_ctrl({.name = "nvme0"});
  add_ctrl({.name = "nvme1", .traddr = "192.168.51.10", .host_traddr = "192.168.51.1"});
  add_ctrl({.name = "nvme2", .subsys = 1, .traddr = "192.168.52.10", .host_traddr = ""});  // one path
  const size_t before = hash_tree(env.fs);
  Status st = Ok{};
  const json j = reconnect_json(st, "balanced");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(exit_code(st.error().code), 0);
  EXPECT_NE(st.error().message.find("refused for nvme2"), std::string::npos) << st.error().message;
  EXPECT_EQ(st.error().cause,
            "nvme2 is the only live path of nvme1n1: reconnecting it would stop I/O; disconnect and "
            "connect it yourself in a maintenance window");
  EXPECT_EQ(hash_tree(env.fs), before);  // no knob, no state file, no delete
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(entry(j, "nvme2")["status"], "refused");
  EXPECT_EQ(entry(j, "nvme0")["status"], "not done");
  EXPECT_EQ(entry(j, "nvme1")["status"], "not done");
  EXPECT_NE(j["summary"].get<std::string>().find("nothing changed"), std::string::npos);
}

TEST_F(TuneReconnectTest, BestEffortRecreatesTheOthersAndExitsNonZero) {
  add_ctrl({.name = "nvme0"});
  add_ctrl({.name = "nvme1", .traddr = "192.168.51.10", .host_traddr = "192.168.51.1"});
  add_ctrl({.name = "nvme2", .subsys = 1, .traddr = "192.168.52.10", .host_traddr = ""});
  Status st = Ok{};
  const json j = reconnect_json(st, "balanced", {}, true);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(exit_code(st.error().code), 0);
  EXPECT_NE(st.error().message.find("refused for nvme2; the others were re-created"), std::string::npos)
      << st.error().message;
  EXPECT_EQ(events, (std::vector<std::string>{"delete nvme0", "create nvme4", "paths nvme4", "delete nvme1",
                                              "create nvme5", "paths nvme5"}));
  EXPECT_TRUE(env.fs.exists("/sys/class/nvme/nvme2"));
  EXPECT_EQ(entry(j, "nvme2")["status"], "refused");
  EXPECT_EQ(entry(j, "nvme0")["status"], "reconnected");
  EXPECT_EQ(entry(j, "nvme1")["status"], "reconnected");
  // the knobs were applied (best effort covers them too), nvme2's namespace included
  EXPECT_EQ(*env.fs.read("/sys/block/nvme1n1/queue/nomerges"), "1\n");
  EXPECT_EQ(*env.fs.read("/sys/block/nvme0c5n1/queue/nomerges"), "1\n");
}

TEST_F(TuneReconnectTest, WithoutNativeMultipathEveryControllerIsRefused) {
  multipath = false;  // nvme_core multipath=N: each controller has its own block device
  add_ctrl({.name = "nvme0"});
  add_ctrl({.name = "nvme1", .traddr = "192.168.51.10", .host_traddr = "192.168.51.1"});
  Status st = Ok{};
  const json j = reconnect_json(st, "balanced", {}, true);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(events.empty());
  EXPECT_TRUE(env.fabrics.written.empty());
  EXPECT_EQ(entry(j, "nvme0")["status"], "refused");
  EXPECT_NE(entry(j, "nvme0")["why"].get<std::string>().find("nvme0 serves nvme0n1 without native multipath"),
            std::string::npos)
      << entry(j, "nvme0")["why"];
  EXPECT_EQ(entry(j, "nvme1")["status"], "refused");
}

TEST_F(TuneReconnectTest, APathThatIsNotLiveOrAnaInaccessibleIsNoOtherPath) {
  add_ctrl({.name = "nvme0"});
  add_ctrl({.name = "nvme1", .traddr = "192.168.51.10", .host_traddr = "192.168.51.1"});
  env.fs.add("/sys/class/nvme/nvme1/nvme0c1n1/ana_state", "inaccessible\n");
  Status st = Ok{};
  json j = reconnect_json(st, "balanced");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(entry(j, "nvme0")["status"], "refused");
  EXPECT_NE(entry(j, "nvme0")["why"].get<std::string>().find("only live path of nvme0n1"), std::string::npos);
  EXPECT_EQ(entry(j, "nvme1")["status"], "not done");  // its other path (nvme0) serves
  env.fs.add("/sys/class/nvme/nvme1/nvme0c1n1/ana_state", "optimized\n");
  env.fs.add("/sys/class/nvme/nvme1/state", "connecting\n");
  j = reconnect_json(st, "balanced");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(entry(j, "nvme0")["why"].get<std::string>().find("only live path"), std::string::npos);
  EXPECT_NE(entry(j, "nvme1")["why"].get<std::string>().find("nvme1 is connecting, not live"), std::string::npos);
  EXPECT_TRUE(events.empty());
}

TEST_F(TuneReconnectTest, RefusedConnectIsConnectedAgainWithTheOriginalParametersAndNamed) {
  add_ctrl({.name = "nvme0"});
  add_ctrl({.name = "nvme1", .traddr = "192.168.51.10", .host_traddr = "192.168.51.1"});
  refuse = [](const std::string& o) { return o.find("nr_poll_queues=2") != std::string::npos; };
  Status st = Ok{};
  const json j = reconnect_json(st, "balanced");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(exit_code(st.error().code), 0);
  EXPECT_EQ(st.error().message.rfind("--reconnect: nvme0: the connect with the profile's queues failed", 0), 0u)
      << st.error().message;
  EXPECT_NE(st.error().cause.find("connected again with its old parameters as nvme4"), std::string::npos)
      << st.error().cause;
  EXPECT_NE(st.error().cause.find("no controller was re-created before it"), std::string::npos) << st.error().cause;
  // the profile's options, then the original ones; nvme1 is not touched
  ASSERT_EQ(env.fabrics.written.size(), 2u);
  EXPECT_EQ(env.fabrics.written[0],
            profile_options("192.168.50.10", "192.168.50.1", "reconnect_delay=10,ctrl_loss_tmo=-1,keep_alive_tmo=5"));
  EXPECT_EQ(env.fabrics.written[1],
            fmt::format("transport=rdma,traddr=192.168.50.10,trsvcid=4420,nqn={},hostnqn={},hostid={},"
                        "host_traddr=192.168.50.1,queue_size=32,nr_io_queues=1,"
                        "reconnect_delay=10,ctrl_loss_tmo=-1,keep_alive_tmo=5",
                        kSubnqn, kHostnqn, kHostUuid));
  EXPECT_EQ(events, (std::vector<std::string>{"delete nvme0", "refused create", "create nvme4", "paths nvme4"}));
  EXPECT_EQ(read_trim(env.fs, "/sys/class/nvme/nvme4/queue_count"), "2");
  EXPECT_EQ(read_trim(env.fs, "/sys/class/nvme/nvme4/sqsize"), "31");
  EXPECT_EQ(read_trim(env.fs, "/sys/class/nvme/nvme4/ctrl_loss_tmo"), "off");
  EXPECT_EQ(entry(j, "nvme0")["status"], "failed");
  EXPECT_EQ(entry(j, "nvme0")["new_ctrl"], "nvme4");
  EXPECT_EQ(entry(j, "nvme1")["status"], "not done");
  EXPECT_TRUE(env.fs.exists("/sys/class/nvme/nvme1"));
  // the knobs stay set (a reconnect failure does not roll them back), the restored path has them
  EXPECT_TRUE(env.fs.exists(kTuneStatePath));
  EXPECT_EQ(*env.fs.read("/sys/block/nvme0c4n1/queue/nomerges"), "1\n");
}

TEST_F(TuneReconnectTest, ControllerNotBackInTimeIsReplacedByTheOriginalAndTheDoneOnesStay) {
  add_ctrl({.name = "nvme0"});
  add_ctrl({.name = "nvme1", .traddr = "192.168.51.10", .host_traddr = "192.168.51.1"});
  // the second re-create comes up, but its namespace never shows through it
  no_paths = [](const std::string& o) {
    return o.find("traddr=192.168.51.10") != std::string::npos && o.find("nr_poll_queues=2") != std::string::npos;
  };
  Status st = Ok{};
  const json j = reconnect_json(st, "balanced");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("nvme1: nvme5 is live but nvme0n1 has no path through it after 60 s"),
            std::string::npos)
      << st.error().message;
  EXPECT_NE(st.error().cause.find("connected again with its old parameters as nvme6"), std::string::npos)
      << st.error().cause;
  EXPECT_NE(st.error().cause.find("re-created before it, with the new queues: nvme0 (now nvme4)"), std::string::npos)
      << st.error().cause;
  EXPECT_EQ(events, (std::vector<std::string>{"delete nvme0", "create nvme4", "paths nvme4", "delete nvme1",
                                              "create nvme5", "delete nvme5", "create nvme6", "paths nvme6"}));
  EXPECT_GE(t, 60.0);
  EXPECT_LT(t, 70.0);
  EXPECT_EQ(entry(j, "nvme0")["status"], "reconnected");
  EXPECT_EQ(entry(j, "nvme1")["status"], "failed");
  EXPECT_EQ(entry(j, "nvme1")["new_ctrl"], "nvme6");
  EXPECT_EQ(read_trim(env.fs, "/sys/class/nvme/nvme6/queue_count"), "2");
  EXPECT_EQ(read_trim(env.fs, "/sys/class/nvme/nvme4/queue_count"), "7");
}

TEST_F(TuneReconnectTest, DuplicateAssociationIsRecreatedWithDuplicateConnect) {
  // two controllers of one association (the second made with duplicate_connect)
  add_ctrl({.name = "nvme0"});
  add_ctrl({.name = "nvme1"});
  Status st = Ok{};
  reconnect_json(st, "balanced");
  ASSERT_TRUE(st.ok()) << st.error().message;
  ASSERT_EQ(env.fabrics.written.size(), 2u);
  EXPECT_NE(env.fabrics.written[0].find(",duplicate_connect"), std::string::npos) << env.fabrics.written[0];
  EXPECT_NE(env.fabrics.written[1].find(",duplicate_connect"), std::string::npos) << env.fabrics.written[1];
  EXPECT_EQ(events, (std::vector<std::string>{"delete nvme0", "create nvme4", "paths nvme4", "delete nvme1",
                                              "create nvme5", "paths nvme5"}));
}

}  // namespace
}  // namespace rnvme
