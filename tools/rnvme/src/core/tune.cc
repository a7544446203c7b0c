#include "core/tune.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "core/hostid.h"
#include "core/topology.h"

namespace rnvme {
namespace {

constexpr const char* kQueueSysfs = "Documentation/block/queue-sysfs.rst";

// The values of one profile. Documentation/tune.rst is the table of these, with the same reasons.
struct ProfileValues {
  std::string scheduler;
  int nomerges;
  int rq_affinity;
  std::optional<int> read_ahead_kb;  // nullopt: left alone
  bool moderation;
  int poll_queue_cap;                // nr_poll_queues = min(CPUs, this); 0: none
  int queue_size;
};

ProfileValues values_of(TuneProfile p) {
  switch (p) {
    case TuneProfile::kLatency: return {"none", 2, 2, std::nullopt, false, 4, 128};
    case TuneProfile::kThroughput: return {"none", 0, 2, 4096, true, 0, 128};
    case TuneProfile::kBalanced: return {"none", 1, 1, 1024, true, 2, 128};
  }
  return {"none", 1, 1, std::nullopt, true, 0, 128};
}

std::string why_scheduler(TuneProfile p) {
  if (p == TuneProfile::kThroughput)
    return "none, not mq-deadline: an RDMA controller has a hardware queue per CPU and the target "
           "orders its own media; mq-deadline adds a shared lock and a dispatch pass per request "
           "and only pays off against slow rotational devices or to favour reads over writes";
  return "none: a hardware queue per CPU and a target that schedules its own media; an I/O "
         "scheduler adds a shared lock and a dispatch pass to every request";
}

std::string why_nomerges(int v) {
  switch (v) {
    case 2: return "2: no merge lookups at all; small random I/O never merges, the lookup is pure cost";
    case 1: return "1: only the cheap one-hit merge with the last request";
    default: return "0: full merging; sequential streams become fewer, larger RDMA transfers";
  }
}

std::string why_rq_affinity(int v) {
  return v == 2 ? "2: complete each request on the CPU that issued it (cache-hot, no cross-CPU wakeup)"
                : "1: complete on a CPU of the issuing CPU's cache group (the kernel's default)";
}

std::string trimmed(std::string_view s) { return trim(s); }

// The value a file knob is compared by.
std::string shown_value(const std::string& attr, const std::string& raw) {
  if (attr == "scheduler") return selected_scheduler(raw);
  return trimmed(raw);
}

}  // namespace

std::optional<TuneProfile> parse_tune_profile(std::string_view name) {
  for (auto p : kAllTuneProfiles)
    if (tune_profile_name(p) == name) return p;
  return std::nullopt;
}

std::string_view tune_profile_name(TuneProfile p) {
  switch (p) {
    case TuneProfile::kLatency: return "latency";
    case TuneProfile::kThroughput: return "throughput";
    case TuneProfile::kBalanced: return "balanced";
  }
  return "?";
}

std::optional<std::vector<int>> parse_cpu_list(std::string_view s) {
  const std::string t = trim(s);
  std::set<int> out;
  if (t.empty()) return std::vector<int>{};
  size_t pos = 0;
  while (pos <= t.size()) {
    size_t comma = t.find(',', pos);
    std::string_view part = std::string_view(t).substr(pos, comma == std::string::npos ? t.npos : comma - pos);
    size_t dash = part.find('-');
    auto a = parse_int(part.substr(0, dash));
    auto b = dash == std::string_view::npos ? a : parse_int(part.substr(dash + 1));
    if (!a || !b || *a < 0 || *b < *a || *b - *a > 65536) return std::nullopt;
    for (int c = *a; c <= *b; c++) out.insert(c);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return std::vector<int>(out.begin(), out.end());
}

std::string format_cpu_list(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) j++;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string selected_scheduler(std::string_view file) {
  const size_t open = file.find('[');
  const size_t close = file.find(']', open);
  if (open != std::string_view::npos && close != std::string_view::npos)
    return std::string(file.substr(open + 1, close - open - 1));
  return trim(file);
}

std::vector<TuneKnob> plan_tune(const TuneFacts& f, TuneProfile p) {
  const ProfileValues v = values_of(p);
  std::vector<TuneKnob> out;
  auto file_knob = [&](const TuneNamespaceFacts& ns, const std::string& attr,
                       std::optional<std::string> target, std::string why, std::string source) {
    auto it = ns.attrs.find(attr);
    if (it == ns.attrs.end()) return;  // this kernel has no such attribute
    TuneKnob k;
    k.scope = ns.name;
    k.name = attr;
    k.path = ns.queue_dir + "/" + attr;
    k.current = shown_value(attr, it->second);
    k.target = std::move(target);
    k.why = std::move(why);
    k.source = std::move(source);
    out.push_back(std::move(k));
  };
  std::set<std::string> done_ns, done_dev;
  for (const auto& c : f.ctrls) {
    for (const auto& name : c.namespaces) {
      if (!done_ns.insert(name).second) continue;
      auto nit = std::find_if(f.namespaces.begin(), f.namespaces.end(),
                              [&](const TuneNamespaceFacts& n) { return n.name == name; });
      if (nit == f.namespaces.end()) continue;
      const auto& ns = *nit;
      file_knob(ns, "scheduler", v.scheduler, why_scheduler(p),
                fmt::format("{} (scheduler); Documentation/block/blk-mq.rst", kQueueSysfs));
      file_knob(ns, "nomerges", std::to_string(v.nomerges), why_nomerges(v.nomerges),
                fmt::format("{} (nomerges)", kQueueSysfs));
      file_knob(ns, "rq_affinity", std::to_string(v.rq_affinity), why_rq_affinity(v.rq_affinity),
                fmt::format("{} (rq_affinity)", kQueueSysfs));
      file_knob(ns, "read_ahead_kb",
                v.read_ahead_kb ? std::optional<std::string>(std::to_string(*v.read_ahead_kb)) : std::nullopt,
                v.read_ahead_kb
                    ? fmt::format("{} KiB: sequential readers keep more in flight per stream", *v.read_ahead_kb)
                    : std::string("left alone: read-ahead is not on the path of small random I/O"),
                fmt::format("{} (read_ahead_kb); tuned throughput-performance ([disk] readahead=>4096)",
                            kQueueSysfs));
      file_knob(ns, "nr_requests", std::nullopt,
                "left alone: without a scheduler it is bounded by the tag set, i.e. queue_size "
                "(a connect-time choice below)",
                fmt::format("{} (nr_requests)", kQueueSysfs));
      file_knob(ns, "io_poll", std::nullopt,
                "left alone (read-only on current kernels): polling is available when the "
                "controller has poll queues (nr_poll_queues) and is used by io_uring IOPOLL / "
                "RWF_HIPRI",
                fmt::format("{} (io_poll)", kQueueSysfs));
    }
    if (c.rdma_device.empty() || !done_dev.insert(c.rdma_device).second) continue;
    auto dit = std::find_if(f.devices.begin(), f.devices.end(),
                            [&](const TuneDeviceFacts& d) { return d.name == c.rdma_device; });
    if (dit == f.devices.end()) continue;
    const auto& d = *dit;

    // Completion-vector IRQs, spread over the device's NUMA-local CPUs in vector order.
    if (d.irqs.empty()) {
      TuneKnob k;
      k.scope = d.name;
      k.name = "irq_affinity";
      k.current = "-";
      k.why = d.software ? "no completion-vector IRQs (software device)"
                         : "no completion-vector IRQs of this device in /proc/interrupts";
      k.source = "/proc/interrupts";
      out.push_back(std::move(k));
    }
    std::vector<TuneIrqFacts> irqs = d.irqs;
    std::stable_sort(irqs.begin(), irqs.end(),
                     [](const TuneIrqFacts& a, const TuneIrqFacts& b) { return a.vector < b.vector; });
    for (size_t i = 0; i < irqs.size(); i++) {
      const auto& q = irqs[i];
      TuneKnob k;
      k.scope = fmt::format("{} irq {}", d.name, q.irq);
      k.name = "smp_affinity_list";
      k.path = fmt::format("/proc/irq/{}/smp_affinity_list", q.irq);
      auto cur = parse_cpu_list(q.affinity);
      k.current = cur ? format_cpu_list(*cur) : trimmed(q.affinity);
      if (!d.local_cpus.empty()) {
        k.target = std::to_string(d.local_cpus[i % d.local_cpus.size()]);
        k.why = fmt::format("{}: vector {} on one CPU of NUMA node {} ({}), one vector per CPU in "
                            "turn, so completions land next to the device's memory",
                            q.name, q.vector, d.numa_node, format_cpu_list(d.local_cpus));
      } else {
        k.why = q.name + ": the device's local CPUs are unknown; left alone";
      }
      k.source = "Documentation/core-api/irq/irq-affinity.rst; NVIDIA set_irq_affinity_bynode.sh";
      out.push_back(std::move(k));
    }

    // CQ adaptive moderation (DIM).
    {
      TuneKnob k;
      k.scope = d.name;
      k.name = "adaptive_moderation";
      k.kind = KnobKind::kModeration;
      k.path = d.name;
      k.source = "rdma-dev(8) adaptive-moderation; Documentation/networking/net_dim.rst";
      if (d.software) {
        k.current = d.moderation ? (*d.moderation ? "on" : "off") : "-";
        k.why = "left alone: a software device completes in a work queue, not by interrupt";
      } else if (!d.moderation) {
        k.current = "-";
        k.why = "left alone: " + (d.moderation_error.empty()
                                      ? std::string("the kernel does not report it (needs 5.10+)")
                                      : d.moderation_error);
      } else {
        k.current = *d.moderation ? "on" : "off";
        k.target = v.moderation ? "on" : "off";
        k.why = v.moderation
                    ? "on: DIM coalesces completions under load and backs off when idle; applies "
                      "to CQs created after it is set (reconnect)"
                    : "off: every completion interrupts at once; applies to CQs created after it is "
                      "set (reconnect)";
        k.source += v.moderation ? "" : "; NVIDIA performance tuning guide (low latency: moderation off)";
      }
      out.push_back(std::move(k));
    }

    // rdma_cm's default ToS per port, only towards a lossless class.
    for (int port : d.ports) {
      TuneKnob k;
      k.scope = d.name;
      k.name = fmt::format("default_roce_tos port {}", port);
      k.source = "Documentation/ABI/testing/configfs-rdma_cm; DCB as rnvme doctor reads it";
      const std::string dir = fmt::format("{}/{}", kRdmaCmConfigfs, d.name);
      k.path = fmt::format("{}/ports/{}/default_roce_tos", dir, port);
      if (d.cm_dir) {
        auto it = d.tos.find(port);
        k.current = it == d.tos.end() ? "-" : trimmed(it->second);
      } else {
        k.current = "0";  // rdma_cm's default when no group was made
        k.needs = dir;
      }
      if (d.software) {
        k.why = "left alone: a software device has no DCB traffic classes";
      } else if (!d.lossless_tos) {
        k.why = "left alone: " + d.lossless_why;
      } else if (!d.configfs) {
        k.why = "left alone: rdma_cm's configfs is not mounted (modprobe rdma_cm; mount -t configfs "
                "none /sys/kernel/config); lossless class: " + d.lossless_why;
      } else {
        k.target = std::to_string(*d.lossless_tos);
        k.why = fmt::format("{}: connections without tos= land on the lossless class ({})",
                            *d.lossless_tos, d.lossless_why);
      }
      out.push_back(std::move(k));
    }
  }

  // Connect-time defaults: read by connect / connect-all for options not given.
  if (!f.ctrls.empty()) {
    const auto cur = f.defaults ? parse_tune_defaults(*f.defaults) : std::map<std::string, int>{};
    const auto want = tune_connect_values(f.cpus, p);
    const int polls = want.at("nr_poll_queues");
    const std::string later =
        " Takes effect at the next connect; existing associations keep their queues.";
    const std::string src = "nvme-connect(1); drivers/nvme/host/fabrics.c (defaults: one I/O queue "
                            "per online CPU, queue_size 128, no poll queues)";
    struct Row {
      const char* key;
      int value;
      std::string why;
    };
    const Row rows[] = {
        {"nr_io_queues", want.at("nr_io_queues"),
         fmt::format("{}: one I/O queue per online CPU, no CPU shares a queue.", want.at("nr_io_queues"))},
        {"nr_poll_queues", polls,
         polls ? fmt::format("{}: polled queues for io_uring IOPOLL/RWF_HIPRI (min(CPUs, {})); unused "
                             "queues cost memory, not CPU.",
                             polls, v.poll_queue_cap)
               : std::string("0: no polled queues; completions come by interrupt.")},
        {"queue_size", want.at("queue_size"),
         fmt::format("{}: the kernel's default and the largest every nvme-rdma host takes (256 "
                     "needs Linux 6.10+ and the target's MQES).",
                     v.queue_size)},
    };
    for (const auto& r : rows) {
      TuneKnob k;
      k.scope = "connect";
      k.name = r.key;
      k.kind = KnobKind::kDefaults;
      k.path = kTuneDefaultsPath;
      auto it = cur.find(r.key);
      k.current = it == cur.end() ? "(not set)" : std::to_string(it->second);
      k.target = std::to_string(r.value);
      k.why = r.why + later;
      k.source = src;
      out.push_back(std::move(k));
    }
  }
  return out;
}

std::map<std::string, int> tune_connect_values(int cpus, TuneProfile p) {
  const ProfileValues v = values_of(p);
  cpus = std::max(1, cpus);
  return {{"nr_io_queues", cpus},
          {"nr_poll_queues", std::min(cpus, v.poll_queue_cap)},
          {"queue_size", v.queue_size}};
}

namespace {

int want_of(const std::map<std::string, int>& want, const char* key) {
  auto it = want.find(key);
  return it == want.end() ? 0 : it->second;
}

std::string layout_text(std::optional<int> io, std::optional<int> size) {
  return fmt::format("{} I/O queues, queue_size {}", io ? std::to_string(*io) : std::string("?"),
                     size ? std::to_string(*size) : std::string("?"));
}

std::string want_text(const std::map<std::string, int>& want) {
  const int io = want_of(want, "nr_io_queues"), poll = want_of(want, "nr_poll_queues");
  return fmt::format("{} I/O queues ({} poll), queue_size {}", io + poll, poll, want_of(want, "queue_size"));
}

}  // namespace

bool reconnect_queues_match(const TuneReconnectFacts& c, const std::map<std::string, int>& want) {
  if (!c.queue_count || !c.sqsize) return false;
  return *c.queue_count == 1 + want_of(want, "nr_io_queues") + want_of(want, "nr_poll_queues") &&
         *c.sqsize == want_of(want, "queue_size") - 1;
}

std::optional<std::string> reconnect_refusal(const TuneReconnectFacts& c) {
  const std::string yourself = "disconnect and connect it yourself in a maintenance window";
  if (c.state != "live")
    return fmt::format("{} is {}, not live: its namespaces may already depend on the other paths; "
                       "run again once it is live, or {}",
                       c.name, c.state.empty() ? std::string("in an unknown state") : c.state, yourself);
  if (!c.unreadable.empty())
    return fmt::format("{}'s connect parameters cannot be read from sysfs ({}): {}", c.name, c.unreadable,
                       yourself);
  for (const auto& p : c.paths) {
    if (p.head.empty())
      return fmt::format("{} serves {} without native multipath (nvme_core multipath=N, or a "
                         "namespace that is not shared): reconnecting it would stop I/O and remove "
                         "the block device; {}",
                         c.name, p.path, yourself);
    if (p.others.empty())
      return fmt::format("{} is the only live path of {}: reconnecting it would stop I/O; {}", c.name,
                         p.head, yourself);
  }
  return std::nullopt;
}

std::vector<TuneReconnect> plan_reconnect(const std::vector<TuneReconnectFacts>& ctrls,
                                          const std::map<std::string, int>& want) {
  std::vector<TuneReconnect> out;
  int order = 0;
  for (const auto& c : ctrls) {
    TuneReconnect r;
    r.ctrl = c.name;
    for (const auto& p : c.paths) {
      const std::string& ns = p.head.empty() ? p.path : p.head;
      if (std::find(r.namespaces.begin(), r.namespaces.end(), ns) == r.namespaces.end())
        r.namespaces.push_back(ns);
    }
    if (c.queue_count && *c.queue_count >= 1) r.io_queues = *c.queue_count - 1;
    if (c.sqsize && *c.sqsize >= 0) r.queue_size = *c.sqsize + 1;
    r.want_io_queues = want_of(want, "nr_io_queues");
    r.want_poll_queues = want_of(want, "nr_poll_queues");
    r.want_queue_size = want_of(want, "queue_size");
    if (c.discovery) {
      r.status = "left alone";
      r.why = "a discovery controller has no I/O queues";
      out.push_back(std::move(r));
      continue;
    }
    if (reconnect_queues_match(c, want)) {
      r.status = "ok";
      r.why = fmt::format("already as the profile wants: {}", want_text(want));
      out.push_back(std::move(r));
      continue;
    }
    if (auto why = reconnect_refusal(c)) {
      r.status = "refused";
      r.why = *why;
      out.push_back(std::move(r));
      continue;
    }
    r.opts = c.original;
    r.opts.queue_size = r.want_queue_size;
    r.opts.nr_io_queues = r.want_io_queues;
    r.opts.nr_poll_queues = r.want_poll_queues;
    r.opts.nr_write_queues.reset();
    // The old layout as far as sysfs shows it: how many of its queues were poll or write queues
    // it does not say, so they come back as default queues (the kernel caps them at the CPUs).
    r.restore = c.original;
    if (r.queue_size) r.restore.queue_size = *r.queue_size;
    if (r.io_queues && *r.io_queues >= 1) {
      r.restore.nr_io_queues = *r.io_queues;
      r.restore.nr_poll_queues = 0;
    }
    auto s = build_option_string(r.opts);
    auto rs = build_option_string(r.restore);
    if (!s || !rs) {
      r.status = "refused";
      r.why = fmt::format("{}'s connect parameters as sysfs shows them do not make a connect: {}", c.name,
                          (!s ? s.error() : rs.error()).message);
      out.push_back(std::move(r));
      continue;
    }
    r.options = redact_secrets(*s);
    r.restore_options = redact_secrets(*rs);
    r.order = ++order;
    r.status = "would reconnect";
    r.why = fmt::format("{} -> {}{}", layout_text(r.io_queues, r.queue_size), want_text(want),
                        r.namespaces.empty()
                            ? std::string("; it serves no namespace")
                            : fmt::format("; I/O to {} goes on through the other paths meanwhile",
                                          fmt::join(r.namespaces, " ")));
    out.push_back(std::move(r));
  }
  return out;
}

std::string render_tune_defaults(const std::map<std::string, int>& values, TuneProfile p) {
  std::string out = fmt::format(
      "# Connect-time defaults written by 'rnvme tune apply --profile {}'.\n"
      "# rnvme connect / connect-all use them for options not given on the command line or in\n"
      "# config.json; 'rnvme tune revert' puts back what was here before.\n",
      tune_profile_name(p));
  for (const auto& [k, v] : values) out += fmt::format("{}={}\n", k, v);
  return out;
}

std::map<std::string, int> parse_tune_defaults(std::string_view text) {
  std::map<std::string, int> out;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const size_t eq = t.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = trim(std::string_view(t).substr(0, eq));
    if (key != "nr_io_queues" && key != "nr_poll_queues" && key != "queue_size") continue;
    if (auto n = parse_int(trim(std::string_view(t).substr(eq + 1))); n && *n >= 0) out[key] = *n;
  }
  return out;
}

std::vector<std::string> apply_tune_defaults(ConnectOptions& opts,
                                             const std::map<std::string, int>& defaults) {
  std::vector<std::string> filled;
  if (opts.is_discovery()) return filled;
  auto fill = [&](const char* key, std::optional<int>& slot) {
    auto it = defaults.find(key);
    if (slot || it == defaults.end()) return;
    slot = it->second;
    filled.push_back(fmt::format("{}={}", key, it->second));
  };
  fill("nr_io_queues", opts.nr_io_queues);
  fill("nr_poll_queues", opts.nr_poll_queues);
  fill("queue_size", opts.queue_size);
  return filled;
}

std::string render_tuned_conf(const std::vector<TuneKnob>& knobs, TuneProfile p) {
  const char* base = p == TuneProfile::kLatency      ? "latency-performance"
                     : p == TuneProfile::kThroughput ? "throughput-performance"
                                                     : "balanced";
  std::string out = fmt::format(
      "# Written by 'rnvme tune export-tuned' (profile {}): the block-queue settings of that profile\n"
      "# for the NVMe-oF RDMA namespaces present when it was written. Reconnects can renumber\n"
      "# them: run it again after a change. IRQ affinity, adaptive moderation, rdma_cm ToS and\n"
      "# the connect defaults are not tuned's: enable rnvme-tune.service for those.\n"
      "[main]\nsummary=rnvme NVMe-oF RDMA host, {} (from rnvme tune)\ninclude={}\n\n",
      tune_profile_name(p), tune_profile_name(p), base);
  out += "[cpu]\n";
  out += p == TuneProfile::kBalanced ? "governor=schedutil|ondemand|powersave\nenergy_perf_bias=normal\n"
                                     : "governor=performance\nenergy_perf_bias=performance\n";
  if (p == TuneProfile::kLatency) out += "force_latency=cstate.id_no_zero:1|3\n";
  out += "\n[disk]\n# the namespaces' readahead and elevator are set per attribute in [sysfs]\n";
  out += "\n[sysfs]\n";
  for (const auto& k : knobs)
    if (k.kind == KnobKind::kFile && k.target && k.path.rfind("/sys/block/", 0) == 0)
      out += fmt::format("{}={}\n", k.path, *k.target);
  return out;
}

const TuneStateEntry* TuneState::find(std::string_view kind, std::string_view path) const {
  for (const auto& e : entries)
    if (e.kind == kind && e.path == path) return &e;
  return nullptr;
}

nlohmann::json to_json(const TuneState& s) {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : s.entries)
    entries.push_back({{"kind", e.kind},
                       {"path", e.path},
                       {"knob", e.knob},
                       {"original", e.original ? nlohmann::json(*e.original) : nlohmann::json(nullptr)},
                       {"restore", e.restore}});
  return {{"version", 1}, {"profile", s.profile}, {"ctrls", s.ctrls}, {"entries", entries}};
}

Result<TuneState> parse_tune_state(std::string_view text) {
  auto bad = [](const std::string& why) {
    return make_error(ErrorCode::kConfig, fmt::format("{}: {}", kTuneStatePath, why),
                      "the tune state file is damaged",
                      "put back the values by hand from its entries, then remove it");
  };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad("not JSON");
  // not j.value("version", 0): it throws when the key holds another type
  if (auto v = j.find("version"); v == j.end() || !v->is_number() || *v != 1) return bad("unknown version");
  TuneState s;
  try {
    s.profile = j.at("profile").get<std::string>();
    s.ctrls = j.at("ctrls").get<std::vector<std::string>>();
    for (const auto& e : j.at("entries")) {
      TuneStateEntry t;
      t.kind = e.at("kind").get<std::string>();
      t.path = e.at("path").get<std::string>();
      t.knob = e.value("knob", t.path);
      if (!e.at("original").is_null()) t.original = e.at("original").get<std::string>();
      t.restore = e.value("restore", "");
      if (t.kind != "file" && t.kind != "moderation" && t.kind != "mkdir" && t.kind != "defaults")
        return bad("unknown entry kind " + t.kind);
      s.entries.push_back(std::move(t));
    }
  } catch (const nlohmann::json::exception& ex) {
    return bad(ex.what());
  }
  if (!parse_tune_profile(s.profile)) return bad("unknown profile " + s.profile);
  return s;
}

}  // namespace rnvme
