#include <fmt/format.h>

#include "cmd/commands.h"
#include "core/config.h"
#include "core/device_arg.h"
#include "core/discovery.h"
#include "sys/lock.h"
#include "sys/sysfs.h"

#include <optional>
#include <set>

namespace rnvme {
namespace {

// One run's walk over discovery services: those whose log was read (or tried), so that a
// referral back to one is not followed again, and how many were reached through referrals.
struct DiscoveryWalk {
  std::set<std::string> read;
  size_t referred = 0;
};

// "traddr:trsvcid", as `via` and the entries' source name a discovery service.
std::string service_name(const ConnectOptions& o) {
  return fmt::format("{}:{}", o.traddr, o.trsvcid_or_default());
}

// A discovery service as this host reaches it: a referral inherits host NQN and host address,
// so along one chain this is traddr:trsvcid; two configured lines through two host ports stay two.
std::string service_key(const ConnectOptions& o) {
  return fmt::format("{}\n{}\n{}", service_name(o), o.host_traddr, o.hostnqn);
}

ConnectAllItem make_item(std::string source, const ConnectOptions& o, std::string via) {
  ConnectAllItem i;
  i.source = std::move(source);
  i.nqn = o.nqn;
  i.traddr = o.traddr;
  i.trsvcid = std::string(o.trsvcid_or_default());
  i.via = std::move(via);
  return i;
}

// An entry not connected, and why; its trsvcid as given (another transport has other defaults).
void push_skipped(ConnectAllOutcome& out, std::string source, const ConnectOptions& o,
                  std::string via, std::string why) {
  ConnectAllItem item = make_item(std::move(source), o, std::move(via));
  item.trsvcid = o.trsvcid;
  item.status = "skipped";
  item.detail = std::move(why);
  out.items.push_back(std::move(item));
}

void set_failed(ConnectAllItem& item, const Error& e) {
  item.status = "failed";
  item.detail = e.cause.empty() ? e.message : e.message + "; " + e.cause;
  if (!e.fix.empty()) item.detail += "; fix: " + e.fix;
  item.failure_class = e.reason;
}

// Connects one subsystem port, recording the result; failures do not stop the others.  A port
// already connected (connect_controller looks at sysfs first) is reported with its controller.
void connect_one(Context& ctx, const std::string& source, const ConnectOptions& o,
                 const std::string& via, ConnectAllOutcome& out) {
  ConnectAllItem item = make_item(source, o, via);
  if (auto r = connect_controller(ctx, o)) {
    item.status = r->already_connected ? "already_connected"
                  : r->dry_run         ? "would_connect"
                                       : "connected";
    item.device = r->device;
    if (!r->already_connected) item.options = r->options;
  } else {
    set_failed(item, r.error());
  }
  out.items.push_back(std::move(item));
}

void connect_log_entries(Context& ctx, const ConfigEntry& disc, const std::vector<uint8_t>& bytes,
                         int depth, DiscoveryWalk& walk, ConnectAllItem head,
                         ConnectAllOutcome& out);

// Reads one discovery controller's log and connects every RDMA NVM subsystem in it, following
// its referrals. `depth` 0: a configured discovery controller, reported only when it fails;
// otherwise a referral `via` another discovery service, reported as followed or failed.
// A live persistent discovery controller of this host to the discovery service `o` names
// (nvme-cli's lookup_discovery_ctrl()), or "".
std::string existing_discovery_controller(Context& ctx, ConnectOptions o) {
  (void)resolve_host_identity(ctx, o);
  const Topology topo = scan_topology(ctx.fs);
  const NvmeController* c = find_association(topo, o);
  return c ? c->name : std::string();
}

void connect_from_discovery(Context& ctx, const ConfigEntry& disc, const std::string& via,
                            int depth, DiscoveryWalk& walk, ConnectAllOutcome& out) {
  walk.read.insert(service_key(disc.opts));
  ConnectAllItem head = make_item(disc.source, disc.opts, via);
  // -p: the discovery controller stays, with nvme-cli's keep-alive unless one is given, and
  // one that is there already is read instead of making another (unless --force)
  const bool keep = disc.discovery.persistent;
  ConnectOptions o = disc.opts;
  if (keep && !o.keep_alive_tmo) o.keep_alive_tmo = kPersistentDiscoveryKato;
  std::string device =
      keep && !disc.discovery.force && !ctx.dry_run ? existing_discovery_controller(ctx, o) : "";
  bool existed = !device.empty();
  if (!existed) {
    auto c = connect_controller(ctx, o);
    if (!c) {
      set_failed(head, c.error());
      out.items.push_back(std::move(head));
      return;
    }
    if (c->dry_run) {
      head.status = "would_discover";
      head.options = c->options;
      out.items.push_back(std::move(head));
      return;
    }
    device = c->device;
    existed = c->already_connected;
  }
  auto bytes = ctx.dlog.read(device);
  // Only needed for the log page, unless it was there before or is to stay.
  if (!existed && !keep) (void)delete_controller(ctx, device);
  if (!bytes) {
    set_failed(head, bytes.error());
    out.items.push_back(std::move(head));
    return;
  }
  connect_log_entries(ctx, disc, *bytes, depth, walk, std::move(head), out);
}

// Why the referral `e` to the discovery service `o` is not followed, or "" to follow it.
std::string referral_not_followed(const DiscoveryEntry& e, const ConnectOptions& o, int depth,
                                  const DiscoveryWalk& walk) {
  if (e.eflags & kEflagsDupRetInfo)
    return "referral not followed: it returns the same information as this log (DUPRETINFO)";
  if (walk.read.contains(service_key(o)))
    return fmt::format("referral not followed: discovery service {} already read in this run",
                       service_name(o));
  if (depth >= kMaxReferralDepth)
    return fmt::format("referral not followed: depth limit of {} referrals reached",
                       kMaxReferralDepth);
  if (walk.referred >= kMaxReferredDiscovery)
    return fmt::format("referral not followed: limit of {} discovery controllers reached through "
                       "referrals in one run",
                       kMaxReferredDiscovery);
  return {};
}

// Connects every RDMA NVM subsystem entry of a discovery log page and follows its RDMA
// referrals; `disc` supplies the host identity, host address and tunables of each connection
// (and of each referred discovery controller), `depth` is its distance in referrals from the
// configured discovery controller.
void connect_log_entries(Context& ctx, const ConfigEntry& disc, const std::vector<uint8_t>& bytes,
                         int depth, DiscoveryWalk& walk, ConnectAllItem head,
                         ConnectAllOutcome& out) {
  auto log = decode_discovery_log(bytes);
  if (!log) {
    set_failed(head, log.error());
    out.items.push_back(std::move(head));
    return;
  }
  // A referral read: its entry comes before those of its log, so the chain reads top down.
  if (depth > 0) {
    head.status = "followed";
    out.items.push_back(std::move(head));
  }
  const std::string via = service_name(disc.opts);
  const std::string src = "discovery " + via;
  for (const auto& e : log->entries) {
    // host identity and tunables carry over from the discovery line
    ConnectOptions o = entry_connect_options(disc.opts, e);
    std::string skip;
    if (e.trtype != kTrtypeRdma)
      skip = fmt::format("transport {} is not rdma", trtype_name(e.trtype));
    else if (e.subtype == kSubtypeReferral)
      skip = referral_not_followed(e, o, depth, walk);
    else if (e.subtype != kSubtypeNvme)
      skip = fmt::format("{} entry not followed", subtype_name(e.subtype));
    if (!skip.empty()) {
      push_skipped(out, src, o, via, std::move(skip));
    } else if (e.subtype == kSubtypeReferral) {
      walk.referred++;
      connect_from_discovery(ctx, ConfigEntry{src, o, {}}, via, depth + 1, walk, out);
    } else {
      connect_one(ctx, src, o, via, out);
    }
  }
}

// A persistent discovery controller that announced a change of its log (udev: NVME_AEN 0x70f002
// on nvmeN, rnvme-connect@nvmeN.service): the log is read from that controller, never from a new
// one, and each connection takes its transport, host address and host identity.
Result<ConfigEntry> device_entry(Context& ctx, const std::string& dev, const ConnectAllArgs& args) {
  const NvmeController* c = nullptr;
  const Topology topo = scan_topology(ctx.fs);
  for (const auto& s : topo.subsystems)
    for (const auto& k : s.controllers)
      if (k.name == dev) c = &k;
  if (!c)
    return make_error(ErrorCode::kNotFound, fmt::format("no controller {}", dev), {},
                      "'rnvme list' shows the controllers");
  if (c->subsysnqn != kDiscoveryNqn)
    return make_error(ErrorCode::kUsage, fmt::format("{} is not a discovery controller", dev),
                      fmt::format("its subsystem is {}", c->subsysnqn),
                      "pass the nvmeN of a persistent discovery controller");
  ConfigEntry disc{fmt::format("discovery controller {}", dev), args.opts, {}};
  disc.opts.transport = c->transport;
  disc.opts.traddr = c->traddr;
  disc.opts.trsvcid = c->trsvcid;
  disc.opts.nqn = std::string(kDiscoveryNqn);
  if (!c->host_traddr.empty()) disc.opts.host_traddr = c->host_traddr;
  if (!c->hostnqn.empty()) disc.opts.hostnqn = c->hostnqn;
  if (!c->hostid.empty()) disc.opts.hostid = c->hostid;
  return disc;
}

Status connect_from_device(Context& ctx, const std::string& dev, const ConfigEntry& disc,
                           DiscoveryWalk& walk, ConnectAllOutcome& out) {
  ConnectAllItem head = make_item(disc.source, disc.opts, "");
  head.device = dev;
  if (ctx.dry_run) {
    head.status = "would_discover";
    out.items.push_back(std::move(head));
    return Ok{};
  }
  walk.read.insert(service_key(disc.opts));
  auto bytes = ctx.dlog.read(dev);
  if (!bytes) return bytes.error();
  connect_log_entries(ctx, disc, *bytes, 0, walk, std::move(head), out);
  return Ok{};
}

// Why a line or port is not connected (another transport, a value rnvme cannot use), or "".
std::string skip_reason(const ConfigEntry& e) {
  if (!e.skip.empty()) return e.skip;
  if (!is_rdma_transport_name(e.opts.transport))
    return fmt::format("transport {} is not rdma", e.opts.transport);
  return {};
}

// --dump-config: what would be connected, with the host identity connect would send, in
// config.json's layout; what would be skipped is named on stderr.
Status dump_config(Context& ctx, const std::vector<const ConfigEntry*>& entries) {
  std::vector<ConnectOptions> ports;
  for (const ConfigEntry* e : entries) {
    for (const auto& n : e->opts.ignored) ctx.out.note(fmt::format("{}: {}", e->source, n));
    if (auto why = skip_reason(*e); !why.empty()) {
      ctx.out.note(fmt::format("{}: skipped: {}", e->source, why));
      continue;
    }
    ConnectOptions o = e->opts;
    (void)resolve_host_identity(ctx, o);
    ports.push_back(std::move(o));
  }
  ctx.out.raw(render_config_json(ports));
  return Ok{};
}

}  // namespace

Status run_connect_all(Context& ctx, const ConnectAllArgs& args) {
  if (args.quiet) ctx.out.set_quiet(true);
  if (!args.raw.empty())
    return make_error(ErrorCode::kUsage, fmt::format("-r/--raw {} is not supported", args.raw),
                      "nvme-cli's connect-all -r saves the discovery log to that file instead of "
                      "connecting; rnvme has no raw log output",
                      "drop -r to connect, or use 'rnvme discover -o json' to see the log");
  std::vector<ConfigEntry> discovery;  // discovery controllers to ask
  std::vector<ConfigEntry> direct;     // subsystems to connect as configured
  std::optional<ConfigEntry> from_device;
  std::string device;  // --device: the controller's name (nvmeN)
  if (!args.device.empty()) {
    auto name = controller_arg(args.device);
    if (!name) return name.error();
    device = std::move(*name);
    // the controller itself says where to connect
    auto d = device_entry(ctx, device, args);
    if (!d) return d.error();
    from_device = std::move(*d);
  } else if (!args.event.empty()) {
    auto e = parse_event_instance(args.event);
    if (!e) return e.error();
    ConnectOptions tmpl = args.opts;  // host identity and tunables from the command line
    tmpl.transport = e->opts.transport;
    tmpl.traddr = e->opts.traddr;
    tmpl.trsvcid = e->opts.trsvcid;
    tmpl.nqn = e->opts.nqn;
    // and what they leave unset from config.json's port of that discovery controller (discover's)
    if (auto st = apply_config_json(ctx, args.config_json, tmpl); !st) return st;
    discovery.push_back({e->source, tmpl, {}, args.discovery});
  } else if (!args.opts.traddr.empty()) {
    ConfigEntry e{"command line", args.opts, {}, args.discovery};
    if (e.opts.nqn.empty()) e.opts.nqn = std::string(kDiscoveryNqn);
    if (auto st = apply_config_json(ctx, args.config_json, e.opts); !st) return st;
    discovery.push_back(std::move(e));
  } else {
    if (auto text = ctx.fs.read(args.discovery_conf)) {
      auto entries = parse_discovery_conf(*text, args.discovery_conf);
      if (!entries) return entries.error();
      for (auto& e : *entries) discovery.push_back(std::move(e));
    }
    auto entries = read_config_json(ctx, args.config_json);
    if (!entries) return entries.error();
    for (auto& e : *entries) (e.opts.is_discovery() ? discovery : direct).push_back(std::move(e));
    // An empty configuration (nvme-cli's comment-only discovery.conf) is not an error: the boot
    // unit runs on every host that has the files.
    if (discovery.empty() && direct.empty() && !args.dump_config) {
      ConnectAllOutcome none;
      none.note = fmt::format(
          "nothing configured: no --traddr given and neither {} nor {} lists a controller "
          "(add a line such as '--transport=rdma --traddr=10.0.0.1 --trsvcid=4420' to "
          "discovery.conf)",
          args.discovery_conf, args.config_json);
      ctx.out.print(none);
      return Ok{};
    }
    // Command-line options apply where the file leaves them unset (-p and --force to each line,
    // as nvme-cli's do).
    for (auto& e : discovery) {
      fill_unset(e.opts, args.opts);
      e.discovery.persistent = e.discovery.persistent || args.discovery.persistent;
      e.discovery.force = e.discovery.force || args.discovery.force;
    }
    for (auto& e : direct) fill_unset(e.opts, args.opts);
  }

  if (args.dump_config) {
    std::vector<const ConfigEntry*> all;
    if (from_device) all.push_back(&*from_device);
    for (const auto& d : discovery) all.push_back(&d);
    for (const auto& e : direct) all.push_back(&e);
    return dump_config(ctx, all);
  }

  // One connect-all at a time: a second waits, then finds the controllers made by the first.
  std::optional<FileLock> lock;
  if (!ctx.dry_run && !args.lock_file.empty()) {
    auto l = FileLock::acquire(args.lock_file, std::chrono::seconds(args.lock_wait_s));
    if (!l) return l.error();
    lock.emplace(std::move(*l));
  }
  ConnectAllOutcome out;
  DiscoveryWalk walk;
  if (from_device)
    if (auto st = connect_from_device(ctx, device, *from_device, walk, out); !st)
      return st;
  // Lines and ports for another transport, or that rnvme cannot honour, are skipped with why;
  // options that do not apply to RDMA are named once per line.
  auto usable = [&](const ConfigEntry& e) {
    for (const auto& n : e.opts.ignored) ctx.out.note(fmt::format("{}: {}", e.source, n));
    std::string why = skip_reason(e);
    if (why.empty()) return true;
    push_skipped(out, e.source, e.opts, "", std::move(why));
    return false;
  };
  for (const auto& d : discovery) {
    if (!usable(d)) continue;
    // another line, or a referral, has read this discovery service in this run
    if (walk.read.contains(service_key(d.opts)))
      push_skipped(out, d.source, d.opts, "",
                   fmt::format("discovery service {} already read in this run",
                               service_name(d.opts)));
    else
      connect_from_discovery(ctx, d, "", 0, walk, out);
  }
  for (const auto& e : direct)
    if (usable(e)) connect_one(ctx, e.source, e.opts, "", out);
  ctx.out.print(out);
  size_t failed = 0;
  for (const auto& i : out.items) failed += i.status == "failed";
  if (failed)
    return make_error(ErrorCode::kConnect,
                      fmt::format("{} of {} connections failed", failed, out.items.size()), {},
                      "see the per-entry causes above");
  return Ok{};
}

Action setup_connect_all(CLI::App& sub) {
  auto args = std::make_shared<ConnectAllArgs>();
  add_connect_options(sub, args->opts);
  sub.add_option("-J,--config", args->config_json,
                 "nvme-cli's JSON configuration: its ports are connected (without --traddr), or "
                 "give the discovery controller's unset options; 'none' for no file")
      ->capture_default_str();
  sub.add_option("--discovery-conf", args->discovery_conf, "discovery controllers, one per line")
      ->capture_default_str();
  sub.add_option("--event", args->event,
                 "TRADDR_TRSVCID of a discovery controller whose log changed (udev, "
                 "rnvme-connect@.service)");
  sub.add_option("--device", args->device,
                 "a persistent discovery controller (nvmeN) whose log changed: read the log there "
                 "(udev, rnvme-connect@.service)");
  sub.add_option("--lock-file", args->lock_file,
                 "serializes connect-all runs (udev, boot unit, admin); '' for none")
      ->capture_default_str();
  sub.add_option("--lock-wait", args->lock_wait_s, "seconds to wait for another connect-all")
      ->capture_default_str()
      ->check(CLI::Range(0, 3600));
  sub.add_flag("-O,--dump-config", args->dump_config,
               "print the configuration that would be connected (nvme-cli's config.json layout, "
               "keys as (secret)) and connect nothing");
  sub.add_flag("-p,--persistent", args->discovery.persistent,
               "keep the discovery controllers connected (keep-alive 30 s unless -k); one that is "
               "there already is read instead of connecting another");
  sub.add_flag("--force", args->discovery.force,
               "with -p: connect a new discovery controller even where one is there already");
  sub.add_option("-r,--raw", args->raw, "nvme-cli's 'save the log to FILE': not supported (refused)");
  add_quiet_option(sub, args->quiet);
  return [args](Context& ctx) { return run_connect_all(ctx, *args); };
}

}  // namespace rnvme
