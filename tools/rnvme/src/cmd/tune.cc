// rnvme tune: show, apply and revert the host settings that matter for NVMe-oF RDMA controllers
// (block queues of their namespaces, the RDMA device's completion-vector IRQs, CQ adaptive
// moderation, rdma_cm's default ToS and the connect-time queue choices), and export them as a
// tuned profile. The knobs and their values are core/tune.cc's; this file reads the facts and
// makes the writes, transactionally: every original value goes into the state file before the
// first write, a failure part way puts back what this run set. apply --reconnect then re-creates
// the controllers whose queue layout differs from the profile's, one at a time and only while
// every namespace each serves has another live path (native multipath); a failed re-create is
// connected again with its old parameters and stops the run.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "cmd/commands.h"
#include "core/topology.h"
#include "core/device_arg.h"
#include "core/doctor.h"
#include "core/hostid.h"
#include "core/json_text.h"
#include "core/tune.h"
#include "sys/fabric_probe.h"
#include "sys/lock.h"
#include "sys/sysfs.h"

namespace rnvme {
namespace {

const char* const kQueueAttrs[] = {"scheduler", "nomerges", "rq_affinity", "read_ahead_kb",
                                   "nr_requests", "io_poll"};

// transport "rdma" (nvme_rdma, or rnvme.ko under that name), or an rnvme.ko controller under
// another transport_name (it has the rnvme attribute group whichever name it registered)
bool is_rdma_ctrl(const FileSystem& fs, const std::string& n) {
  const std::string cdir = fmt::format("{}/{}", kNvmeClass, n);
  return read_trim(fs, cdir + "/transport") == "rdma" || fs.exists(cdir + "/rnvme");
}

// The controllers named, or every RDMA controller; an unknown or non-RDMA name is an error.
Result<std::vector<std::string>> select_ctrls(Context& ctx, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  if (!names.empty()) {
    for (const auto& n : names) {
      if (!is_controller_name(n))
        return make_error(ErrorCode::kUsage, fmt::format("'{}' is not a controller name", n), {},
                          "name a controller like nvme0 ('rnvme list' shows them)");
      if (!ctx.fs.exists(fmt::format("{}/{}", kNvmeClass, n)))
        return make_error(ErrorCode::kNotFound, fmt::format("no controller {}", n), {},
                          "'rnvme list' shows the controllers");
      if (!is_rdma_ctrl(ctx.fs, n))
        return make_error(ErrorCode::kNotFound, fmt::format("{} is not an NVMe-oF RDMA controller", n),
                          {}, "rnvme tune handles RDMA controllers (nvme_rdma, rnvme)");
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
    return out;
  }
  for (const auto& n : list_or_empty(ctx.fs, kNvmeClass))
    if (is_controller_name(n) && is_rdma_ctrl(ctx.fs, n)) out.push_back(n);
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return controller_instance(a).value_or(0) < controller_instance(b).value_or(0);
  });
  return out;
}

// src_addr=... of a controller's address line.
std::string src_addr_of(const std::string& address) {
  static const std::regex re("src_addr=([^,\\s]+)");
  std::smatch m;
  return std::regex_search(address, m, re) ? m[1].str() : std::string();
}

// "PCI_SLOT_NAME=0000:3b:00.0" of a uevent file.
std::string pci_slot(const FileSystem& fs, const std::string& uevent) {
  auto r = fs.read(uevent);
  if (!r) return {};
  std::istringstream in(*r);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("PCI_SLOT_NAME=", 0) == 0) return trim(line.substr(14));
  return {};
}

// A completion-vector IRQ name: mlx5_comp3[@pci:...], irdma-<pci>-CEQ-3 / -AEQCEQ-0,
// bnxt_re-nq-3@pci:...; the vector number, or nullopt.
std::optional<int> completion_vector(const std::string& name) {
  static const std::regex re(
      "^(?:mlx5_comp([0-9]+)(?:@pci:.*)?|irdma-.*-(?:AEQ)?CEQ-([0-9]+)|bnxt_re-nq-([0-9]+)(?:@pci:.*)?)$");
  std::smatch m;
  if (!std::regex_match(name, m, re)) return std::nullopt;
  for (int i = 1; i <= 3; i++)
    if (m[i].matched) return parse_int(m[i].str());
  return std::nullopt;
}

// /proc/interrupts: IRQ number -> the name at the end of its line.
std::map<int, std::string> irq_names(const FileSystem& fs) {
  std::map<int, std::string> out;
  auto r = fs.read("/proc/interrupts");
  if (!r) return out;
  std::istringstream in(*r);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string first;
    ls >> first;
    if (first.empty() || first.back() != ':') continue;
    auto irq = parse_int(first.substr(0, first.size() - 1));
    if (!irq) continue;  // NMI:, LOC: ...
    std::string tok, last;
    while (ls >> tok) last = tok;
    out[*irq] = last;
  }
  return out;
}

TuneDeviceFacts read_device(Context& ctx, FabricProbe& probe, const RdmaDevice* inv,
                            const std::string& name, const std::vector<int>& online) {
  TuneDeviceFacts d;
  d.name = name;
  const std::string dir = fmt::format("{}/{}", kInfinibandClass, name);
  d.software = !ctx.fs.exists(dir + "/device");
  std::string netdev;
  if (inv) {
    for (const auto& p : inv->ports) {
      d.ports.push_back(p.index);
      if (netdev.empty()) netdev = p.netdev;
    }
  } else {
    for (const auto& p : list_or_empty(ctx.fs, dir + "/ports"))
      if (auto i = parse_int(p)) d.ports.push_back(*i);
  }
  if (!d.software) {
    // An auxiliary RDMA device (irdma, bnxt_re) has no PCI attributes of its own: its netdev's
    // PCI function has the NUMA node, the local CPUs and the MSI-X vectors.
    std::string pci_dir = dir + "/device";
    if (!ctx.fs.exists(pci_dir + "/numa_node") && !netdev.empty() &&
        ctx.fs.exists("/sys/class/net/" + netdev + "/device"))
      pci_dir = "/sys/class/net/" + netdev + "/device";
    d.numa_node = parse_int(read_trim(ctx.fs, pci_dir + "/numa_node")).value_or(-1);
    std::optional<std::vector<int>> local = parse_cpu_list(read_trim(ctx.fs, pci_dir + "/local_cpulist"));
    if ((!local || local->empty()) && d.numa_node >= 0)
      local = parse_cpu_list(read_trim(ctx.fs, fmt::format("/sys/devices/system/node/node{}/cpulist", d.numa_node)));
    if (!local || local->empty()) local = online;
    for (int c : *local)
      if (online.empty() || std::find(online.begin(), online.end(), c) != online.end())
        d.local_cpus.push_back(c);
    // The vectors are the PCI function's MSI-X vectors with a completion-vector name; without a
    // msi_irqs listing, those whose name carries the function's address.
    std::set<int> msi;
    const bool have_msi = ctx.fs.exists(pci_dir + "/msi_irqs");
    for (const auto& i : list_or_empty(ctx.fs, pci_dir + "/msi_irqs"))
      if (auto n = parse_int(i)) msi.insert(*n);
    std::string pci = pci_slot(ctx.fs, pci_dir + "/uevent");
    if (pci.empty()) pci = pci_slot(ctx.fs, dir + "/device/uevent");
    for (const auto& [irq, iname] : irq_names(ctx.fs)) {
      auto vec = completion_vector(iname);
      if (!vec) continue;
      const bool mine = have_msi ? msi.count(irq) > 0 : (!pci.empty() && iname.find(pci) != std::string::npos);
      if (!mine) continue;
      TuneIrqFacts q;
      q.irq = irq;
      q.name = iname;
      q.vector = *vec;
      auto aff = ctx.fs.read(fmt::format("/proc/irq/{}/smp_affinity_list", irq));
      if (!aff) continue;
      q.affinity = *aff;
      d.irqs.push_back(std::move(q));
    }
  }
  if (auto m = ctx.netlink.adaptive_moderation(name))
    d.moderation = *m;
  else
    d.moderation_error = m.error().message;
  d.configfs = ctx.fs.exists(kRdmaCmConfigfs);
  d.cm_dir = ctx.fs.exists(fmt::format("{}/{}", kRdmaCmConfigfs, name));
  if (d.cm_dir)
    for (int p : d.ports)
      if (auto r = ctx.fs.read(fmt::format("{}/{}/ports/{}/default_roce_tos", kRdmaCmConfigfs, name, p)))
        d.tos[p] = *r;
  if (!d.software && !netdev.empty()) {
    DcbState dcb = probe.dcb(netdev);
    if (dcb.support != DcbState::kPresent) {
      VlanFacts v = probe.vlan(netdev);
      if (v.is_vlan) dcb = probe.dcb(v.lower);
    }
    LosslessTos l = lossless_tos(dcb);
    d.lossless_tos = l.tos;
    d.lossless_why = fmt::format("{}: {}", netdev, l.how);
  } else if (!d.software) {
    d.lossless_why = "the device's netdev is not known";
  }
  return d;
}

Result<TuneFacts> gather(Context& ctx, FabricProbe& probe, const std::vector<std::string>& names) {
  TuneFacts f;
  const auto online = parse_cpu_list(read_trim(ctx.fs, "/sys/devices/system/cpu/online"));
  const std::vector<int> cpus = online ? *online : std::vector<int>{};
  f.cpus = std::max<int>(1, static_cast<int>(cpus.size()));
  if (auto d = ctx.fs.read(kTuneDefaultsPath)) f.defaults = *d;
  std::vector<RdmaDevice> inv;
  if (!names.empty())
    if (auto r = rdma_inventory(ctx)) inv = *r;
  static const std::regex ns_re("nvme([0-9]+)(c[0-9]+)?n([0-9]+)");
  std::set<std::string> seen_ns;
  for (const auto& n : names) {
    TuneCtrlFacts c;
    c.name = n;
    const std::string cdir = fmt::format("{}/{}", kNvmeClass, n);
    c.driver = ctx.fs.exists(cdir + "/rnvme") ? "rnvme" : "nvme_rdma";
    std::string dev = read_trim(ctx.fs, cdir + "/rnvme/rdma_device");
    if (dev == "none") dev.clear();
    if (dev.empty()) {
      // nvme_rdma does not say: the device holding the GID of the controller's source address
      const std::string src = src_addr_of(read_trim(ctx.fs, cdir + "/address"));
      if (!src.empty())
        if (auto m = find_gid(inv, src)) dev = m->device->name;
    }
    c.rdma_device = dev;
    auto add_ns = [&](const std::string& name, const std::string& queue_dir) {
      c.namespaces.push_back(name);
      if (!seen_ns.insert(name).second) return;
      TuneNamespaceFacts ns;
      ns.name = name;
      ns.ctrl = n;
      ns.queue_dir = queue_dir;
      for (const char* a : kQueueAttrs)
        if (auto r = ctx.fs.read(queue_dir + "/" + a)) ns.attrs[a] = *r;
      f.namespaces.push_back(std::move(ns));
    };
    for (const auto& e : list_or_empty(ctx.fs, cdir)) {
      std::smatch m;
      if (!std::regex_match(e, m, ns_re)) continue;
      std::string q = fmt::format("/sys/block/{}/queue", e);
      if (!ctx.fs.exists(q)) q = fmt::format("{}/{}/queue", cdir, e);
      if (!ctx.fs.exists(q)) continue;
      add_ns(e, q);
      if (m[2].matched) {  // a path of a multipath head: the head's queue too (read-ahead is there)
        const std::string head = fmt::format("nvme{}n{}", m[1].str(), m[3].str());
        if (ctx.fs.exists(fmt::format("/sys/block/{}/queue", head)))
          add_ns(head, fmt::format("/sys/block/{}/queue", head));
      }
    }
    f.ctrls.push_back(std::move(c));
  }
  std::set<std::string> devs;
  for (const auto& c : f.ctrls)
    if (!c.rdma_device.empty() && devs.insert(c.rdma_device).second) {
      auto it = std::find_if(inv.begin(), inv.end(), [&](const RdmaDevice& d) { return d.name == c.rdma_device; });
      f.devices.push_back(read_device(ctx, probe, it == inv.end() ? nullptr : &*it, c.rdma_device, cpus));
    }
  return f;
}

std::vector<std::string> fact_notes(const TuneFacts& f) {
  std::vector<std::string> out;
  for (const auto& c : f.ctrls)
    out.push_back(fmt::format("{}: {} controller, RDMA device {}, namespaces {}", c.name, c.driver,
                              c.rdma_device.empty() ? "unknown" : c.rdma_device,
                              c.namespaces.empty() ? std::string("none") : fmt::format("{}", fmt::join(c.namespaces, " "))));
  for (const auto& d : f.devices)
    out.push_back(d.software ? fmt::format("{}: software device, no completion-vector IRQs", d.name)
                             : fmt::format("{}: NUMA node {}, local CPUs {}, {} completion-vector IRQs", d.name,
                                           d.numa_node, format_cpu_list(d.local_cpus), d.irqs.size()));
  return out;
}

// The plan of `p`, with every profile's target beside each knob.
std::vector<TuneKnob> full_plan(const TuneFacts& f, TuneProfile p) {
  std::vector<TuneKnob> knobs = plan_tune(f, p);
  for (auto q : kAllTuneProfiles) {
    const auto other = plan_tune(f, q);
    for (size_t i = 0; i < knobs.size() && i < other.size(); i++)
      knobs[i].profiles[std::string(tune_profile_name(q))] = other[i].target.value_or("-");
  }
  return knobs;
}

Result<std::optional<TuneState>> load_state(Context& ctx) {
  if (!ctx.fs.exists(kTuneStatePath)) return std::optional<TuneState>{};
  auto text = ctx.fs.read(kTuneStatePath);
  if (!text) return text.error();
  auto s = parse_tune_state(*text);
  if (!s) return s.error();
  return std::optional<TuneState>{std::move(*s)};
}

std::string state_text(const TuneState& s) { return dump_json(to_json(s), 2) + "\n"; }

// Writes a state entry's value (`value`, or its original when restoring).
Status write_entry(Context& ctx, const TuneStateEntry& e, const std::optional<std::string>& value,
                   const std::string& sysfs_value) {
  if (e.kind == "file") return ctx.fs.write(e.path, sysfs_value);
  if (e.kind == "moderation") return ctx.netlink.set_adaptive_moderation(e.path, sysfs_value == "on");
  if (e.kind == "mkdir") return value ? ctx.fs.make_dir(e.path) : ctx.fs.remove_dir(e.path);
  if (e.kind == "defaults")
    return value ? ctx.fs.replace_files({{e.path, *value}}) : ctx.fs.remove_file(e.path);
  return make_error(ErrorCode::kFailure, "unknown state entry " + e.kind);
}

// Puts back one entry's original; nothing is written when it is there already.
Status restore_entry(Context& ctx, const TuneStateEntry& e, std::string& status) {
  if (e.kind == "file") {
    if (!ctx.fs.exists(e.path)) {
      status = "gone (device removed)";
      return Ok{};
    }
    auto cur = ctx.fs.read(e.path);
    if (cur && e.original && *cur == *e.original) {
      status = "unchanged";
      return Ok{};
    }
  } else if (e.kind == "moderation") {
    auto cur = ctx.netlink.adaptive_moderation(e.path);
    if (cur && *cur && e.original && (**cur ? "on" : "off") == *e.original) {
      status = "unchanged";
      return Ok{};
    }
  } else if (e.kind == "mkdir") {
    if (!ctx.fs.exists(e.path)) {
      status = "unchanged";
      return Ok{};
    }
    status = "removed";
    return ctx.fs.remove_dir(e.path);
  } else if (e.kind == "defaults") {
    auto cur = ctx.fs.read(e.path);
    if ((!cur && !e.original) || (cur && e.original && *cur == *e.original)) {
      status = "unchanged";
      return Ok{};
    }
    status = "restored";
    return write_entry(ctx, e, e.original, "");
  }
  status = "restored";
  return write_entry(ctx, e, e.original, e.restore);
}

// One step of an apply: the state entry it needs (what was there) and the value to write.
struct Step {
  size_t knob;            // index into the report's knobs
  TuneStateEntry entry;
  std::string value;      // file: the sysfs value; moderation: on/off; defaults: the content
  bool is_mkdir = false;
};

struct ApplyOptions {
  TuneProfile profile;
  std::vector<std::string> ctrls;  // recorded in the state: what to reapply at boot
  bool best_effort = false;
  std::string only_device;         // --from-state DEVICE: that block device's knobs only
  bool reconnect = false;          // re-create the controllers whose queues differ
};

bool knob_of_device(const TuneKnob& k, const std::string& dev) {
  if (k.scope == dev) return true;
  // a head nvmeSnN brings its paths nvmeScCnN along
  static const std::regex head_re("nvme([0-9]+)n([0-9]+)");
  std::smatch m;
  if (!std::regex_match(dev, m, head_re)) return false;
  const std::regex path_re(fmt::format("nvme{}c[0-9]+n{}", m[1].str(), m[2].str()));
  return std::regex_match(k.scope, path_re);
}

// The knob phase of apply over rep.knobs (planned from `f`): the originals into the state file,
// then the writes; a refused write puts back what this run set (unless best effort). Fills each
// knob's status and rep.summary; prints nothing.
Status apply_knobs(Context& ctx, const ApplyOptions& o, const TuneFacts& f, TuneReport& rep) {
  // The steps, each with what it replaces.
  std::vector<Step> steps;
  std::string defaults_content;
  std::optional<size_t> defaults_knob;
  std::map<std::string, int> defaults = f.defaults ? parse_tune_defaults(*f.defaults) : std::map<std::string, int>{};
  bool defaults_change = false;
  std::set<std::string> mkdirs;
  for (size_t i = 0; i < rep.knobs.size(); i++) {
    auto& k = rep.knobs[i];
    if (!k.target) {
      k.status = "left alone";
      continue;
    }
    if (!k.changes()) {
      k.status = "ok";
      continue;
    }
    k.status = ctx.dry_run ? "would set" : "pending";
    if (k.kind == KnobKind::kDefaults) {
      defaults[k.name] = *parse_int(*k.target);
      defaults_change = true;
      if (!defaults_knob) defaults_knob = i;
      continue;
    }
    if (!k.needs.empty() && mkdirs.insert(k.needs).second) {
      Step s;
      s.knob = i;
      s.entry = {"mkdir", k.needs, k.scope + " rdma_cm group", std::nullopt, ""};
      s.is_mkdir = true;
      steps.push_back(std::move(s));
    }
    Step s;
    s.knob = i;
    s.value = *k.target;
    if (k.kind == KnobKind::kModeration) {
      s.entry = {"moderation", k.path, k.scope + " " + k.name, k.current, k.current};
    } else {
      // a file made by mkdir in this run has no original of its own: the rmdir takes it away
      std::optional<std::string> orig;
      if (k.needs.empty()) {
        auto raw = ctx.fs.read(k.path);
        if (!raw) return raw.error();
        orig = *raw;
      }
      s.entry = {"file", k.path, k.scope + " " + k.name, orig, k.current};
    }
    steps.push_back(std::move(s));
  }
  if (defaults_change) {
    Step s;
    s.knob = *defaults_knob;
    s.entry = {"defaults", kTuneDefaultsPath, "connect defaults", f.defaults, ""};
    s.value = render_tune_defaults(defaults, o.profile);
    steps.push_back(std::move(s));
  }
  const size_t changes = static_cast<size_t>(std::count_if(rep.knobs.begin(), rep.knobs.end(),
                                                           [](const TuneKnob& k) { return k.changes(); }));
  if (ctx.dry_run) {
    rep.summary = fmt::format("dry run: {} to set, nothing written", changes);
    return Ok{};
  }
  if (steps.empty()) {
    rep.summary = "nothing to change: every knob is as the profile has it";
    return Ok{};
  }

  // The state, originals first: an entry already there keeps the value from before any apply.
  auto old = load_state(ctx);
  if (!old) return old.error();
  TuneState state = *old ? **old : TuneState{};
  state.profile = rep.profile;
  if (o.only_device.empty()) state.ctrls = o.ctrls;
  std::vector<bool> added(steps.size(), false);
  for (size_t i = 0; i < steps.size(); i++)
    if (!state.find(steps[i].entry.kind, steps[i].entry.path)) {
      state.entries.push_back(steps[i].entry);
      added[i] = true;
    }
  auto put_back_state = [&]() -> Status {
    if (*old) return ctx.fs.replace_files({{kTuneStatePath, state_text(**old)}});
    return ctx.fs.remove_file(kTuneStatePath);
  };
  const bool state_same = *old && state_text(**old) == state_text(state);
  if (auto st = state_same ? Status(Ok{}) : ctx.fs.replace_files({{kTuneStatePath, state_text(state)}}); !st) {
    Error e = st.take_error();
    e.message = "cannot record the original values, nothing changed: " + e.message;
    return e;
  }

  std::vector<size_t> done;
  std::vector<std::string> refused;
  std::set<std::string> refused_paths;
  for (size_t i = 0; i < steps.size(); i++) {
    const Step& s = steps[i];
    auto& k = rep.knobs[s.knob];
    Status st = s.is_mkdir ? ctx.fs.make_dir(s.entry.path) : write_entry(ctx, s.entry, s.value, s.value);
    if (st) {
      done.push_back(i);
      if (!s.is_mkdir) k.status = "set";
      continue;
    }
    if (o.best_effort) {
      k.status = "refused: " + st.error().message;
      refused.push_back(s.entry.knob);
      if (added[i]) refused_paths.insert(s.entry.kind + " " + s.entry.path);
      continue;
    }
    // Put back what this run set, newest first, then the state file as it was.
    std::vector<std::string> unrestored;
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      std::string status;
      const Step& d = steps[*it];
      const TuneStateEntry& e = d.entry;  // what was there before this run
      if (auto r = restore_entry(ctx, e, status); !r) unrestored.push_back(e.knob);
    }
    Error e = st.take_error();
    e.message = fmt::format("{}: {}", s.entry.knob, e.message);
    if (unrestored.empty()) {
      (void)put_back_state();
      e.cause = fmt::format("the kernel refused {}; the {} value(s) set before it were put back", s.entry.knob,
                            done.size());
    } else {
      e.cause = fmt::format("the kernel refused {}, and putting back {} failed too: the state file "
                            "keeps their original values",
                            s.entry.knob, fmt::join(unrestored, ", "));
    }
    e.fix = "--best-effort applies the rest and reports each knob refused";
    return e;
  }
  if (!refused_paths.empty()) {
    std::erase_if(state.entries, [&](const TuneStateEntry& e) { return refused_paths.count(e.kind + " " + e.path) > 0; });
    Status st = state.entries.empty() && !*old ? ctx.fs.remove_file(kTuneStatePath)
                                               : ctx.fs.replace_files({{kTuneStatePath, state_text(state)}});
    if (!st) return st;
  }
  for (auto& k : rep.knobs)
    if (k.status == "pending") k.status = "set";  // the defaults keys written as one file
  rep.summary = fmt::format("{} set, {} refused; 'rnvme tune revert' puts back the values from {}",
                            changes - refused.size(), refused.size(), kTuneStatePath);
  return Ok{};
}


// ------------------------------------------------------------------ apply --reconnect

// How long a re-created (or restored) controller has to be live with its namespaces' paths back,
// and how often that is looked at.
constexpr double kReconnectWaitSeconds = 60;
constexpr double kReconnectPollSeconds = 0.25;

// nvme0c3n1 -> nvme0n1; "" for a name that is not a path of a multipath head.
std::string head_of(const std::string& path) {
  static const std::regex re("nvme([0-9]+)c[0-9]+n([0-9]+)");
  std::smatch m;
  return std::regex_match(path, m, re) ? fmt::format("nvme{}n{}", m[1].str(), m[2].str()) : std::string();
}

// A path that serves I/O: when the controller reports ANA, optimized or non-optimized
// (inaccessible, persistent-loss and change do not).
bool path_serves(const FileSystem& fs, const std::string& ctrl, const std::string& path) {
  const std::string f = fmt::format("{}/{}/{}/ana_state", kNvmeClass, ctrl, path);
  if (!fs.exists(f)) return true;
  const std::string a = read_trim(fs, f);
  return a == "optimized" || a == "non-optimized";
}

// What --reconnect needs of each of `names`, from sysfs: state, queue layout, the namespaces it
// serves with their other paths, and the parameters it was connected with (those sysfs shows:
// transport, address, subsysnqn, hostnqn, hostid, ctrl_loss_tmo, reconnect_delay,
// fast_io_fail_tmo, kato, tos where a kernel has it, the DH-HMAC-CHAP keys).
std::vector<TuneReconnectFacts> gather_reconnect(Context& ctx, const std::vector<std::string>& names) {
  const Topology topo = scan_topology(ctx.fs);
  std::vector<TuneReconnectFacts> out;
  for (const auto& n : names) {
    const NvmeController c = read_controller(ctx.fs, n);
    const std::string dir = fmt::format("{}/{}", kNvmeClass, n);
    TuneReconnectFacts f;
    f.name = n;
    f.state = c.state;
    f.discovery = c.subsysnqn == kDiscoveryNqn;
    f.queue_count = c.queue_count;
    f.sqsize = c.sqsize;
    for (const auto& p : c.paths) {
      TunePathFacts pf;
      pf.path = p.name;
      pf.head = head_of(p.name);
      if (!pf.head.empty())
        for (const auto& s : topo.subsystems)
          for (const auto& d : s.controllers) {
            if (d.name == n || d.state != "live") continue;
            for (const auto& dp : d.paths)
              if (head_of(dp.name) == pf.head && path_serves(ctx.fs, d.name, dp.name) &&
                  std::find(pf.others.begin(), pf.others.end(), d.name) == pf.others.end())
                pf.others.push_back(d.name);
          }
      f.paths.push_back(std::move(pf));
    }
    ConnectOptions& o = f.original;
    o.transport = c.transport;
    auto a = parse_address(c.address);
    o.traddr = a["traddr"];
    o.trsvcid = a["trsvcid"];
    // what it was created with; TCP's src_addr= is the source routing chose, not an option
    if (a.count("host_traddr")) o.host_traddr = a["host_traddr"];
    o.nqn = c.subsysnqn;
    o.hostnqn = c.hostnqn;
    o.hostid = c.hostid;
    const std::string loss = read_trim(ctx.fs, dir + "/ctrl_loss_tmo");
    o.ctrl_loss_tmo = loss == "off" ? std::optional<int>(-1) : parse_int(loss);  // off: forever
    o.reconnect_delay = c.reconnect_delay;
    o.fast_io_fail_tmo = c.fast_io_fail_tmo;  // "off" is the kernel's default: left unset
    o.keep_alive_tmo = parse_int(read_trim(ctx.fs, dir + "/kato"));
    o.tos = parse_int(read_trim(ctx.fs, dir + "/tos"));  // no kernel up to 6.12 shows it
    for (auto [attr, slot] : {std::pair{"dhchap_secret", &o.dhchap_secret},
                              std::pair{"dhchap_ctrl_secret", &o.dhchap_ctrl_secret}}) {
      const std::string v = read_trim(ctx.fs, dir + "/" + attr);
      if (!v.empty() && v != "none") *slot = v;
    }
    if (o.transport.empty())
      f.unreadable = "no transport";
    else if (o.traddr.empty())
      f.unreadable = "no traddr in its address";
    else if (o.nqn.empty())
      f.unreadable = "no subsysnqn";
    // Another controller of the same association (made with duplicate_connect): the new one
    // needs duplicate_connect too, or the connect would find that one and make nothing.
    Topology rest = topo;
    for (auto& s : rest.subsystems)
      std::erase_if(s.controllers, [&](const NvmeController& x) { return x.name == n; });
    if (find_association(rest, o)) o.duplicate_connect = true;
    out.push_back(std::move(f));
  }
  return out;
}

// Waits until `ctrl` is live with a path to each of `heads`; why not, once the bound is over.
std::optional<std::string> wait_ready(Context& ctx, const TuneClock& clock, const std::string& ctrl,
                                      const std::vector<std::string>& heads) {
  const double until = clock.now() + kReconnectWaitSeconds;
  while (true) {
    const std::string state = read_trim(ctx.fs, fmt::format("{}/{}/state", kNvmeClass, ctrl));
    const auto entries = list_or_empty(ctx.fs, fmt::format("{}/{}", kNvmeClass, ctrl));
    std::vector<std::string> missing;
    for (const auto& h : heads)
      if (std::none_of(entries.begin(), entries.end(), [&](const std::string& e) { return head_of(e) == h; }))
        missing.push_back(h);
    if (state == "live" && missing.empty()) return std::nullopt;
    if (clock.now() >= until) {
      if (state != "live")
        return fmt::format("{} is {} after {:.0f} s, not live", ctrl, state.empty() ? "gone" : state,
                           kReconnectWaitSeconds);
      return fmt::format("{} is live but {} has no path through it after {:.0f} s", ctrl, fmt::join(missing, " "),
                         kReconnectWaitSeconds);
    }
    clock.sleep(kReconnectPollSeconds);
  }
}

// `rnvme connect ...` with `o` (secrets left out): what to run by hand.
std::string connect_command(const ConnectOptions& o) {
  ConnectOptions copy = o;
  std::string cmd = "rnvme connect";
  bool secret = false;
  for (const auto& spec : option_table()) {
    if (spec.str) {
      const std::string& v = *spec.str(copy);
      if (v.empty()) continue;
      if (spec.long_name.rfind("dhchap", 0) == 0) {
        secret = true;
        continue;
      }
      cmd += fmt::format(" --{} {}", spec.long_name, v);
    } else if (spec.num) {
      if (const auto& v = *spec.num(copy)) cmd += fmt::format(" --{} {}", spec.long_name, *v);
    } else if (spec.flag && *spec.flag(copy)) {
      cmd += fmt::format(" --{}", spec.long_name);
    }
  }
  if (secret) cmd += " (with its DH-HMAC-CHAP keys)";
  return cmd;
}

std::string layout_of(const FileSystem& fs, const std::string& ctrl, std::optional<int>& io,
                      std::optional<int>& size) {
  const auto qc = parse_int(read_trim(fs, fmt::format("{}/{}/queue_count", kNvmeClass, ctrl)));
  const auto sq = parse_int(read_trim(fs, fmt::format("{}/{}/sqsize", kNvmeClass, ctrl)));
  io = qc ? std::optional<int>(*qc - 1) : std::nullopt;
  size = sq ? std::optional<int>(*sq + 1) : std::nullopt;
  return fmt::format("{} I/O queues, queue_size {}", io ? std::to_string(*io) : "?",
                     size ? std::to_string(*size) : "?");
}

// Re-creates the controllers `plan` marks "would reconnect", one at a time: each is read again
// at its turn (and refused if it is no longer safe), deleted, connected again with its old
// parameters and the profile's queues, and waited for (live, its namespaces' paths back) before
// the next. The first failure is put back, the controller connected again with its old
// parameters and queue layout, and the rest are not done. `renamed`: old -> new name of every
// controller that is now another one.
Status run_reconnects(Context& ctx, const TuneClock& clock, const std::map<std::string, int>& want,
                      std::vector<TuneReconnect>& plan, std::map<std::string, std::string>& renamed) {
  std::optional<Error> failure;
  std::string stopped_at;
  for (auto& r : plan) {
    if (r.status != "would reconnect") continue;
    if (failure) {
      r.status = "not done";
      r.why = fmt::format("not reached: the reconnects stopped at {}", stopped_at);
      continue;
    }
    const std::string dir = fmt::format("{}/{}", kNvmeClass, r.ctrl);
    if (!ctx.fs.exists(dir)) {
      r.status = "not done";
      r.why = fmt::format("{} is gone (disconnected meanwhile)", r.ctrl);
      r.order = 0;
      continue;
    }
    // Its turn: read again, since the controllers before it were re-created meanwhile.
    TuneReconnect now = plan_reconnect(gather_reconnect(ctx, {r.ctrl}), want).at(0);
    if (now.status == "ok") {
      r.status = "ok";
      r.why = now.why;
      r.order = 0;
      continue;
    }
    if (now.status != "would reconnect") {
      r.status = "refused";
      r.why = "at its turn: " + now.why;
      failure = make_error(ErrorCode::kFailure, fmt::format("--reconnect: {} was refused at its turn", r.ctrl),
                           now.why,
                           "see 'rnvme list'; run 'rnvme tune apply --reconnect' again once every path "
                           "is live");
      stopped_at = r.ctrl;
      continue;
    }
    r.opts = now.opts;
    r.restore = now.restore;
    r.options = now.options;
    r.restore_options = now.restore_options;
    r.io_queues = now.io_queues;
    r.queue_size = now.queue_size;

    if (auto st = delete_controller(ctx, r.ctrl); !st && ctx.fs.exists(dir)) {
      r.status = "failed";
      r.why = fmt::format("not deleted, it keeps its queues: {}", st.error().message);
      failure = st.take_error();
      failure->message = fmt::format("--reconnect: {}", failure->message);
      stopped_at = r.ctrl;
      continue;
    }
    std::string cause, created;
    Error err = make_error(ErrorCode::kFailure, "");
    auto c = connect_controller(ctx, r.opts);
    if (!c) {
      err = c.error();
      cause = fmt::format("the connect with the profile's queues failed: {}", err.message);
    } else if (c->already_connected) {
      cause = fmt::format("{} serves the association already (another connect made it meanwhile): "
                          "nothing was created",
                          c->device);
    } else {
      created = c->device;
      if (auto why = wait_ready(ctx, clock, created, r.namespaces)) cause = *why;
    }
    if (cause.empty()) {
      r.status = "reconnected";
      r.new_ctrl = created;
      const std::string after = layout_of(ctx.fs, created, r.new_io_queues, r.new_queue_size);
      r.why = fmt::format("{} I/O queues, queue_size {} -> {}", r.io_queues ? std::to_string(*r.io_queues) : "?",
                          r.queue_size ? std::to_string(*r.queue_size) : "?", after);
      if (r.new_io_queues != r.want_io_queues + r.want_poll_queues || r.new_queue_size != r.want_queue_size)
        r.why += fmt::format("; fewer than asked ({} I/O queues, queue_size {}): the kernel caps them at "
                             "the CPUs and the target's limits, and a second --reconnect would only do "
                             "the same again",
                             r.want_io_queues + r.want_poll_queues, r.want_queue_size);
      if (created != r.ctrl) renamed[r.ctrl] = created;
      continue;
    }

    // Put it back: the new controller away, then the old parameters and layout again.
    if (!created.empty()) (void)delete_controller(ctx, created);
    std::string restored, restore_problem;
    bool existed = false;
    auto rc = connect_controller(ctx, r.restore);
    if (!rc) {
      restore_problem = rc.error().message;
    } else {
      restored = rc->device;
      existed = rc->already_connected;
      if (!existed)
        if (auto why = wait_ready(ctx, clock, restored, r.namespaces)) restore_problem = *why;
    }
    r.status = "failed";
    r.new_ctrl = restored;
    std::string put_back;
    if (restored.empty()) {
      put_back = fmt::format("connecting it again with its old parameters failed too ({}); connect it "
                             "yourself: {}",
                             restore_problem, connect_command(r.restore));
    } else {
      if (restored != r.ctrl) renamed[r.ctrl] = restored;
      (void)layout_of(ctx.fs, restored, r.new_io_queues, r.new_queue_size);
      put_back = existed ? fmt::format("{} serves its association, made by another connect", restored)
                 : restore_problem.empty()
                     ? fmt::format("connected again with its old parameters as {}", restored)
                     : fmt::format("connected again with its old parameters as {}, but {}", restored,
                                   restore_problem);
    }
    r.why = fmt::format("{}; {}", cause, put_back);
    Error e = err;
    e.message = fmt::format("--reconnect: {}: {}", r.ctrl, cause);
    std::vector<std::string> done;
    for (const auto& d : plan)
      if (d.status == "reconnected") done.push_back(fmt::format("{} (now {})", d.ctrl, d.new_ctrl));
    e.cause = put_back + "; " +
              (done.empty()
                   ? std::string("no controller was re-created before it")
                   : fmt::format("re-created before it, with the new queues: {}", fmt::join(done, ", "))) +
              "; the knobs apply set stay set ('rnvme tune revert' puts them back)";
    e.fix = restored.empty() ? fmt::format("connect it yourself: {}", connect_command(r.restore))
                             : std::string("see why ('rnvme list', the kernel log); the profile's queue "
                                           "choices stay in /etc/rnvme/tune.conf for the next connect");
    if (e.code != ErrorCode::kConnect && e.code != ErrorCode::kEnvironment) e.code = ErrorCode::kFailure;
    failure = std::move(e);
    stopped_at = r.ctrl;
  }
  if (failure) return *failure;
  return Ok{};
}

// "2 re-created, 1 already as the profile wants, 1 refused"
std::string reconnect_summary(const std::vector<TuneReconnect>& plan) {
  std::map<std::string, std::vector<std::string>> by;
  for (const auto& r : plan) by[r.status].push_back(r.ctrl);
  std::vector<std::string> parts;
  auto part = [&](const char* status, const char* words) {
    auto it = by.find(status);
    if (it != by.end())
      parts.push_back(fmt::format("{} {} ({})", it->second.size(), words, fmt::join(it->second, " ")));
  };
  part("would reconnect", "would be re-created");
  part("reconnected", "re-created");
  part("failed", "failed");
  part("ok", "already as the profile wants");
  part("refused", "refused");
  part("not done", "not done");
  part("left alone", "left alone");
  return parts.empty() ? std::string("reconnect: no controllers")
                       : fmt::format("reconnect: {}", fmt::join(parts, ", "));
}

// Updates the controllers of the state file (renamed by the reconnects), so that --from-state
// (udev, boot) finds them.
Status rename_state_ctrls(Context& ctx, const std::map<std::string, std::string>& renamed) {
  auto st = load_state(ctx);
  if (!st) return st.error();
  if (!*st || (*st)->ctrls.empty()) return Ok{};
  TuneState s = **st;
  bool changed = false;
  for (auto& c : s.ctrls)
    if (auto it = renamed.find(c); it != renamed.end()) {
      c = it->second;
      changed = true;
    }
  if (!changed) return Ok{};
  return ctx.fs.replace_files({{kTuneStatePath, state_text(s)}});
}

Status do_apply(Context& ctx, FabricProbe& probe, const ApplyOptions& o, const TuneClock& clock) {
  auto names = select_ctrls(ctx, o.ctrls);
  if (!names) return names.error();
  auto f = gather(ctx, probe, *names);
  if (!f) return f.error();
  TuneReport rep;
  rep.action = "apply";
  rep.profile = std::string(tune_profile_name(o.profile));
  rep.dry_run = ctx.dry_run;
  rep.notes = fact_notes(*f);
  rep.knobs = full_plan(*f, o.profile);
  if (!o.only_device.empty()) {
    std::erase_if(rep.knobs, [&](const TuneKnob& k) { return !knob_of_device(k, o.only_device); });
    rep.notes.clear();
  }
  if (names->empty()) rep.notes.push_back("no NVMe-oF RDMA controllers: nothing to tune");

  // --reconnect: every controller is checked before anything changes.
  const auto want = tune_connect_values(f->cpus, o.profile);
  if (o.reconnect) {
    rep.reconnect = true;
    rep.reconnects = plan_reconnect(gather_reconnect(ctx, *names), want);
    std::vector<std::string> refused;
    for (const auto& r : rep.reconnects)
      if (r.status == "refused") refused.push_back(r.ctrl);
    if (!refused.empty() && !o.best_effort && !ctx.dry_run) {
      for (auto& r : rep.reconnects)
        if (r.status == "would reconnect") {
          r.status = "not done";
          r.why = "a controller is refused, so none is re-created (--best-effort re-creates the others)";
        }
      for (auto& k : rep.knobs) k.status = !k.target ? "left alone" : k.changes() ? "not set" : "ok";
      rep.summary = "nothing changed: " + reconnect_summary(rep.reconnects);
      ctx.out.print(rep);
      const auto& first = *std::find_if(rep.reconnects.begin(), rep.reconnects.end(),
                                        [](const TuneReconnect& r) { return r.status == "refused"; });
      return make_error(ErrorCode::kFailure,
                        fmt::format("--reconnect refused for {}: nothing changed", fmt::join(refused, ", ")),
                        first.why,
                        "--best-effort applies the profile and re-creates the other controllers; or "
                        "name the controllers to re-create");
    }
  }

  // The knobs (the device's moderation and ToS apply to the queues the reconnects create).
  if (auto st = apply_knobs(ctx, o, *f, rep); !st) return st;
  if (!o.reconnect) {
    ctx.out.print(rep);
    return Ok{};
  }
  if (ctx.dry_run) {
    const bool some = std::any_of(rep.reconnects.begin(), rep.reconnects.end(),
                                  [](const TuneReconnect& r) { return r.status == "would reconnect"; });
    const bool refused = std::any_of(rep.reconnects.begin(), rep.reconnects.end(),
                                     [](const TuneReconnect& r) { return r.status == "refused"; });
    rep.summary += "; " + reconnect_summary(rep.reconnects);
    if (some) rep.summary += "; the re-created controllers' namespaces get the namespace knobs after";
    if (refused && !o.best_effort) rep.summary += "; with a refusal, a run without --best-effort changes nothing";
    ctx.out.print(rep);
    return Ok{};
  }

  std::map<std::string, std::string> renamed;
  Status rs = run_reconnects(ctx, clock, want, rep.reconnects, renamed);

  // The new controllers' namespaces (paths made by the reconnects) get the namespace knobs.
  Status ks = Ok{};
  if (!renamed.empty()) {
    ApplyOptions again = o;
    again.reconnect = false;
    again.ctrls.clear();
    for (const auto& c : o.ctrls) {
      auto it = renamed.find(c);
      const std::string now = it == renamed.end() ? c : it->second;
      if (ctx.fs.exists(fmt::format("{}/{}", kNvmeClass, now))) again.ctrls.push_back(now);
    }
    // named controllers that are all gone (a failed restore): none; otherwise those, or every one
    auto names2 = !o.ctrls.empty() && again.ctrls.empty()
                      ? Result<std::vector<std::string>>(std::vector<std::string>{})
                      : select_ctrls(ctx, again.ctrls);
    if (!names2) {
      ks = names2.error();
    } else if (!names2->empty()) {
      auto f2 = gather(ctx, probe, *names2);
      if (!f2) {
        ks = f2.error();
      } else {
        TuneReport rep2;
        rep2.profile = rep.profile;
        rep2.knobs = full_plan(*f2, o.profile);
        ks = apply_knobs(ctx, again, *f2, rep2);
        std::set<std::string> scopes;
        for (const auto& k : rep.knobs) scopes.insert(k.scope);
        for (auto& k : rep2.knobs)
          if (!scopes.count(k.scope)) rep.knobs.push_back(std::move(k));
      }
    }
    if (ks) ks = rename_state_ctrls(ctx, renamed);
  }
  rep.summary += "; " + reconnect_summary(rep.reconnects);
  ctx.out.print(rep);
  if (!rs) return rs;
  if (!ks) {
    Error e = ks.take_error();
    e.message = "after the reconnects, the new paths' knobs: " + e.message;
    return e;
  }
  std::vector<std::string> refused;
  for (const auto& r : rep.reconnects)
    if (r.status == "refused") refused.push_back(r.ctrl);
  if (!refused.empty())
    return make_error(ErrorCode::kFailure,
                      fmt::format("--reconnect refused for {}; the others were re-created", fmt::join(refused, ", ")),
                      std::find_if(rep.reconnects.begin(), rep.reconnects.end(),
                                   [](const TuneReconnect& r) { return r.status == "refused"; })->why,
                      "disconnect and connect the refused controllers yourself in a maintenance window");
  return Ok{};
}

Status do_show(Context& ctx, FabricProbe& probe, const TuneArgs& args) {
  auto names = select_ctrls(ctx, args.all ? std::vector<std::string>{} : args.ctrls);
  if (!names) return names.error();
  auto f = gather(ctx, probe, *names);
  if (!f) return f.error();
  TuneProfile p = TuneProfile::kBalanced;
  std::string from = "no profile applied; showing balanced";
  if (!args.profile.empty()) {
    p = *parse_tune_profile(args.profile);
    from.clear();
  } else if (auto st = load_state(ctx); st && *st) {
    p = parse_tune_profile((*st)->profile).value_or(p);
    from = fmt::format("profile {} applied ({})", (*st)->profile, kTuneStatePath);
  }
  TuneReport rep;
  rep.action = "show";
  rep.profile = std::string(tune_profile_name(p));
  rep.notes = fact_notes(*f);
  if (!from.empty()) rep.notes.push_back(from);
  if (names->empty()) rep.notes.push_back("no NVMe-oF RDMA controllers");
  rep.knobs = full_plan(*f, p);
  size_t differ = 0;
  for (auto& k : rep.knobs) {
    k.status = !k.target ? "left alone" : k.changes() ? fmt::format("differs ({})", rep.profile) : "ok";
    differ += k.changes();
  }
  rep.summary = fmt::format("{} knobs, {} differ from {}", rep.knobs.size(), differ, rep.profile);
  ctx.out.print(rep);
  return Ok{};
}

Status do_revert(Context& ctx) {
  auto st = load_state(ctx);
  if (!st) return st.error();
  TuneReport rep;
  rep.action = "revert";
  if (!*st) {
    rep.summary = "nothing to revert";
    ctx.out.print(rep);
    return Ok{};
  }
  TuneState state = **st;
  rep.profile = state.profile;
  if (ctx.dry_run) {
    for (auto it = state.entries.rbegin(); it != state.entries.rend(); ++it) {
      TuneKnob k;
      k.scope = it->knob;
      k.name = it->kind;
      k.path = it->path;
      k.current = it->original ? trim(*it->original) : "(absent)";
      k.status = "would restore";
      rep.knobs.push_back(std::move(k));
    }
    rep.dry_run = true;
    rep.summary = fmt::format("dry run: {} entries in {}, nothing written", state.entries.size(), kTuneStatePath);
    ctx.out.print(rep);
    return Ok{};
  }
  std::vector<TuneStateEntry> failed;
  std::vector<std::string> failed_names;
  for (auto it = state.entries.rbegin(); it != state.entries.rend(); ++it) {
    TuneKnob k;
    k.scope = it->knob;
    k.name = it->kind;
    k.path = it->path;
    k.current = it->original ? (it->kind == "defaults" ? "(previous file)" : trim(*it->original)) : "(absent)";
    if (auto r = restore_entry(ctx, *it, k.status); !r) {
      k.status = "failed: " + r.error().message;
      failed.insert(failed.begin(), *it);
      failed_names.push_back(it->knob);
    }
    rep.knobs.push_back(std::move(k));
  }
  if (!failed.empty()) {
    state.entries = failed;
    (void)ctx.fs.replace_files({{kTuneStatePath, state_text(state)}});
    ctx.out.print(rep);
    return make_error(ErrorCode::kFailure, fmt::format("could not put back {}", fmt::join(failed_names, ", ")),
                      fmt::format("{} keeps them; the rest were restored", kTuneStatePath),
                      "run 'rnvme tune revert' again once the cause is fixed");
  }
  if (auto r = ctx.fs.remove_file(kTuneStatePath); !r) return r;
  rep.summary = fmt::format("reverted profile {}: {} entries", state.profile, state.entries.size());
  ctx.out.print(rep);
  return Ok{};
}

Status do_export(Context& ctx, FabricProbe& probe, const TuneArgs& args) {
  auto p = parse_tune_profile(args.profile.empty() ? "balanced" : args.profile);
  auto names = select_ctrls(ctx, args.ctrls);
  if (!names) return names.error();
  auto f = gather(ctx, probe, *names);
  if (!f) return f.error();
  const std::string path = args.dir + "/tuned.conf";
  const std::string text = render_tuned_conf(plan_tune(*f, *p), *p);
  if (ctx.dry_run) {
    ctx.out.raw(text);
    return Ok{};
  }
  if (auto st = ctx.fs.replace_files({{path, text}}); !st) return st;
  ctx.out.note(fmt::format("wrote {} (tuned profile {}: activate with 'tuned-adm profile <dir name>')", path,
                           tune_profile_name(*p)));
  return Ok{};
}

}  // namespace

TuneClock real_tune_clock() {
  return {[] {
            return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
          },
          [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }};
}

Status run_tune(Context& ctx, FabricProbe& probe, const TuneArgs& args) {
  return run_tune(ctx, probe, args, real_tune_clock());
}

Status run_tune(Context& ctx, FabricProbe& probe, const TuneArgs& args, const TuneClock& clock) {
  if (!args.profile.empty() && !parse_tune_profile(args.profile))
    return make_error(ErrorCode::kUsage, fmt::format("unknown profile '{}'", args.profile), {},
                      "profiles: latency, throughput, balanced");
  if (args.action == "show") return do_show(ctx, probe, args);
  if (args.action == "revert") return do_revert(ctx);
  if (args.action == "export-tuned") {
    if (args.dir.empty()) return make_error(ErrorCode::kUsage, "export-tuned needs a directory");
    return do_export(ctx, probe, args);
  }
  if (args.action != "apply") return make_error(ErrorCode::kUsage, "tune: show, apply, revert or export-tuned");
  ApplyOptions o;
  o.best_effort = args.best_effort;
  o.reconnect = args.reconnect;
  if (args.from_state) {
    if (args.reconnect)
      return make_error(ErrorCode::kUsage, "--from-state does not reconnect",
                        "--from-state reapplies the knobs (udev, boot); re-creating controllers is "
                        "for an apply run by hand",
                        "rnvme tune apply --profile P --reconnect [nvmeN...]");
    if (!args.profile.empty() || args.ctrls.size() > 1)
      return make_error(ErrorCode::kUsage, "--from-state takes the profile and controllers from the state file",
                        {}, "rnvme tune apply --from-state [BLOCK-DEVICE]");
    auto st = load_state(ctx);
    if (!st) return st.error();
    if (!*st) {
      ctx.out.note(fmt::format("no {}: no profile to reapply", kTuneStatePath));
      return Ok{};
    }
    o.profile = *parse_tune_profile((*st)->profile);
    o.ctrls = (*st)->ctrls;
    o.only_device = args.ctrls.empty() ? std::string() : std::string(strip_dev_prefix(args.ctrls[0]));
    if (!o.ctrls.empty()) {
      // a controller of the state that is gone (renumbered by a reconnect) is no error at boot
      std::erase_if(o.ctrls, [&](const std::string& c) {
        return !ctx.fs.exists(fmt::format("{}/{}", kNvmeClass, c)) || !is_rdma_ctrl(ctx.fs, c);
      });
      if (o.ctrls.empty()) {
        ctx.out.note("the controllers of the tune state are gone: nothing to reapply");
        return Ok{};
      }
    }
    return do_apply(ctx, probe, o, clock);
  }
  if (args.profile.empty())
    return make_error(ErrorCode::kUsage, "apply needs --profile", {}, "profiles: latency, throughput, balanced");
  o.profile = *parse_tune_profile(args.profile);
  o.ctrls = args.ctrls;
  return do_apply(ctx, probe, o, clock);
}

Action setup_tune(CLI::App& sub) {
  auto args = std::make_shared<TuneArgs>();
  sub.require_subcommand(1, 1);
  CLI::App* show = sub.add_subcommand("show", "every knob of each NVMe-oF RDMA controller: current value, "
                                              "the profile's, why and where that comes from");
  show->fallthrough();
  show->add_option("ctrl", args->ctrls, "controllers (nvme0); default: every RDMA controller");
  show->add_flag("--all", args->all, "every NVMe-oF RDMA controller (the default)");
  show->add_option("--profile", args->profile, "compare with this profile (default: the applied one, "
                                               "else balanced)");
  show->callback([args] { args->action = "show"; });

  CLI::App* apply = sub.add_subcommand("apply", "set the knobs to a profile's values, recording the "
                                                "originals in /var/lib/rnvme/tune.json first");
  apply->fallthrough();
  apply->add_option("ctrl", args->ctrls, "controllers (nvme0); default: every RDMA controller");
  apply->add_option("--profile", args->profile, "latency | throughput | balanced");
  apply->add_flag("--best-effort", args->best_effort,
                  "a knob the kernel or device refuses is reported and the rest applied, and with "
                  "--reconnect a refused controller does not keep the others from being re-created "
                  "(default: roll back and fail; change nothing)");
  apply->add_flag("--reconnect", args->reconnect,
                  "re-create the controllers whose queues differ from the profile's, one at a time, "
                  "each only while every namespace it serves has another live path (native "
                  "multipath); a failed one is connected again as it was");
  apply->add_flag("--from-state", args->from_state,
                  "reapply the saved profile to the saved controllers (boot); with one argument, a "
                  "block device (nvme0n1, /dev/nvme0c0n1: udev), that device's queue knobs only");
  apply->callback([args] { args->action = "apply"; });

  CLI::App* revert = sub.add_subcommand("revert", "put back exactly what apply replaced; remove the state file");
  revert->fallthrough();
  revert->callback([args] { args->action = "revert"; });

  CLI::App* exp = sub.add_subcommand("export-tuned", "write DIR/tuned.conf: the profile's block-queue "
                                                     "settings as a tuned profile");
  exp->fallthrough();
  exp->add_option("dir", args->dir, "the tuned profile directory (e.g. /etc/tuned/rnvme-latency)")->required();
  exp->add_option("ctrl", args->ctrls, "controllers (nvme0); default: every RDMA controller");
  exp->add_option("--profile", args->profile, "latency | throughput | balanced (default balanced)");
  exp->callback([args] { args->action = "export-tuned"; });

  return [args](Context& ctx) {
    LibnlFabricProbe probe;
    // --reconnect deletes and connects controllers: not while a connect-all (udev's, the boot
    // unit's) could connect an association in between with other options.
    std::optional<FileLock> lock;
    if (args->action == "apply" && args->reconnect && !args->from_state && !ctx.dry_run) {
      const ConnectAllArgs defaults;
      auto l = FileLock::acquire(defaults.lock_file, std::chrono::seconds(defaults.lock_wait_s));
      if (!l) return Status(l.error());
      lock.emplace(std::move(*l));
    }
    return run_tune(ctx, probe, *args);
  };
}

}  // namespace rnvme
