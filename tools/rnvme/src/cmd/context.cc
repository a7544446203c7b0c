#include "cmd/context.h"
#include "core/tune.h"

#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "core/hostid.h"
#include "sys/host_identity.h"
#include "sys/sysfs.h"

namespace rnvme {

Result<std::vector<RdmaDevice>> rdma_inventory(Context& ctx) {
  auto devs = ctx.netlink.devices();
  std::vector<RdmaDevice> list;
  if (devs) {
    list = std::move(*devs);
  } else {
    if (ctx.verbose) ctx.out.note(fmt::format("netlink: {}; reading sysfs", devs.error().message));
    if (!ctx.fs.exists(kInfinibandClass)) return devs.error();
    list = rdma_devices_from_sysfs(ctx.fs);
  }
  add_rdma_sysfs_details(ctx.fs, list);
  for (auto& d : list)
    for (auto& p : d.ports) p.active_mtu = ctx.ports.active_mtu(d.name, p.index).value_or(0);
  return list;
}

void note_once(Context& ctx, const std::string& text) {
  if (ctx.said.insert(text).second) ctx.out.note(text);
}

// The files through ctx.fs (sys/host_identity.h says why not libnvme's readers).
HostIdentityInput read_host_identity(Context& ctx, std::string_view given_hostnqn,
                                     std::string_view given_hostid) {
  HostIdentityInput in = read_host_identity(ctx.fs, given_hostnqn, given_hostid);
  if (in.hostnqn && !trim(*in.hostnqn).empty()) return in;
  auto generated = ctx.generate_hostnqn();
  if (!generated)
    in.generated_problem = generated.error().message;
  else if (auto why = generated_hostnqn_problem(generated->nqn))
    in.generated_problem = fmt::format("libnvme generated '{}': {}", generated->nqn, *why);
  else if (!generated->stable)
    // nvme-cli takes it, and is another host to the target on every run
    in.generated_problem =
        "this machine has no DMI product UUID (nor a device-tree one), and libnvme makes up a "
        "random host NQN on every run instead";
  else
    in.generated_hostnqn = hostnqn_for_uuid(*uuid_from_hostnqn(generated->nqn));  // lower-case
  return in;
}

HostCheck resolve_host_identity(Context& ctx, ConnectOptions& opts) {
  HostCheck hc = check_host_identity(read_host_identity(ctx, opts.hostnqn, opts.hostid));
  if (opts.hostnqn.empty()) opts.hostnqn = hc.hostnqn;
  if (opts.hostid.empty()) opts.hostid = hc.hostid;
  return hc;
}

EnvironmentFacts gather_environment(Context& ctx, const ConnectOptions& opts) {
  EnvironmentFacts env;
  env.fabrics_loaded = module_loaded(ctx.fs, "nvme_fabrics") || ctx.fs.exists(kFabricsDevice);
  env.transport_loaded = module_loaded(ctx.fs, "rnvme") || module_loaded(ctx.fs, "nvme_rdma");
  if (auto devs = rdma_inventory(ctx)) {
    env.devices_known = true;
    env.devices = std::move(*devs);
  }
  if (!opts.host_traddr.empty()) {
    env.source_addr = opts.host_traddr;
    env.source_is_local = ctx.net.is_local(opts.host_traddr);
  } else if (auto src = ctx.net.source_for(opts.traddr)) {
    env.source_addr = *src;
  } else {
    env.route_errno = src.error().sys_errno;
  }
  ConnectOptions copy = opts;
  env.host = resolve_host_identity(ctx, copy);
  return env;
}

namespace {

// Connecting what exists already is a success, as with nvme-cli (the kernel would say
// EALREADY).  A discovery controller is always a new one: the kernel sets duplicate_connect
// for the discovery NQN itself.
std::optional<ConnectOutcome> existing_association(Context& ctx, const Topology& topo,
                                                   const ConnectOptions& opts) {
  if (opts.duplicate_connect || opts.is_discovery()) return std::nullopt;
  const NvmeController* c = find_association(topo, opts);
  if (!c) return std::nullopt;
  ConnectOutcome out;
  out.already_connected = true;
  out.dry_run = ctx.dry_run;
  out.device = c->name;
  out.instance = c->instance;
  out.cntlid = c->cntlid.value_or(-1);
  if (ctx.verbose)
    ctx.out.note(fmt::format("note: {} already serves {} at {}:{} for host {} ({}); nothing "
                             "written (--duplicate-connect makes another controller)",
                             c->name, opts.nqn, opts.traddr, c->trsvcid, opts.hostnqn, c->state));
  return out;
}

}  // namespace

Result<ConnectOutcome> connect_controller(Context& ctx, ConnectOptions opts) {
  // `rnvme tune apply`'s connect-time choices, for what the command line and config.json left
  // unset.
  if (auto t = ctx.fs.read(kTuneDefaultsPath)) {
    const auto filled = apply_tune_defaults(opts, parse_tune_defaults(*t));
    if (!filled.empty() && ctx.verbose)
      ctx.out.note(fmt::format("from {}: {}", kTuneDefaultsPath, fmt::join(filled, ",")));
  }
  // Values given by the user are checked before anything is read from /etc/nvme.
  if (auto st = validate(opts); !st) {
    Error e = st.error();
    e.reason = std::string(failure_class_name(FailureClass::kBadOption));
    return e;
  }
  for (const auto& w : option_warnings(opts)) ctx.out.note(fmt::format("warning: {}", w));
  // nvme-core without authentication takes the secret and connects unauthenticated when the
  // target does not insist: refuse, since the secret was given to rule that out.
  if ((!opts.dhchap_secret.empty() || !opts.dhchap_ctrl_secret.empty()) &&
      kernel_has_host_auth(ctx.fs) == false) {
    Error e = make_error(ErrorCode::kEnvironment,
                         "in-band authentication: this kernel's nvme-core is built without it",
                         "the kernel has neither CONFIG_NVME_HOST_AUTH nor (before 6.7) "
                         "CONFIG_NVME_AUTH; it would connect without authenticating",
                         "boot a kernel with in-band authentication (Debian 12: "
                         "linux-image-6.12.*+deb12-amd64), or drop --dhchap-secret if the target "
                         "does not require it");
    e.reason = std::string(failure_class_name(FailureClass::kAuthentication));
    return e;
  }
  HostCheck hc = resolve_host_identity(ctx, opts);
  for (const auto& p : hc.problems) {
    // A missing file is the kernel's business (it has a default host), and so is a hostid that
    // is not the hostnqn's UUID (no rule requires it); an unusable file is ours.
    if (!p.fatal || p.kind == HostProblem::kMissing) {
      // option_warnings() has already spoken for a --hostnqn given on the command line.
      const bool said = p.kind == HostProblem::kNonStandard && p.source.rfind("--", 0) == 0;
      if (p.kind == HostProblem::kUnpaired)
        ctx.out.note(fmt::format("warning: {}: {}\n  fix: {}", p.source, p.problem, p.fix));
      else if (p.kind == HostProblem::kGenerated)
        note_once(ctx, fmt::format("warning: {}: {}\n  fix: {}", p.source, p.problem, p.fix));
      else if (p.kind == HostProblem::kNonStandard && !said)
        ctx.out.note(fmt::format("warning: {}: {}", p.source, p.problem));
      else if (!said && ctx.verbose)
        ctx.out.note(fmt::format("note: {}: {}", p.source, p.problem));
      continue;
    }
    Error e = make_error(ErrorCode::kConfig,
                         fmt::format("host identity is unusable: {}: {}", p.source, p.problem),
                         "the host identity file is unusable", p.fix);
    e.reason = std::string(failure_class_name(FailureClass::kHostIdentity));
    return e;
  }
  const Topology topo = scan_topology(ctx.fs);
  if (auto out = existing_association(ctx, topo, opts)) return *out;
  // The rule the kernel does have: one host NQN, one host ID, across its fabrics controllers
  // (a PCIe controller has no host; its sysfs shows no hostnqn on current kernels).
  std::vector<HostInUse> in_use;
  for (const auto& s : topo.subsystems)
    for (const auto& c : s.controllers)
      if (c.transport != "pcie") in_use.push_back({c.name, c.hostnqn, c.hostid});
  if (auto p = find_host_conflict(opts.hostnqn, opts.hostid, in_use)) {
    Error e = make_error(ErrorCode::kConfig, fmt::format("host identity conflict: {}", p->problem),
                         "across the kernel's fabrics controllers one host NQN goes with one "
                         "host ID (nvmf_host_add)",
                         p->fix);
    e.reason = std::string(failure_class_name(FailureClass::kHostIdentity));
    return e;
  }
  auto options = build_option_string(opts);
  if (!options) {
    Error e = options.take_error();
    e.reason = std::string(failure_class_name(FailureClass::kBadOption));
    return e;
  }
  ConnectOutcome out;
  // what is shown and returned carries no secret; the kernel gets the real string
  out.options = redact_secrets(*options);
  if (ctx.verbose) ctx.out.note(fmt::format("option string: {}", out.options));
  if (ctx.dry_run) {
    out.dry_run = true;
    return out;
  }

  ctx.kmsg.mark();
  const auto t0 = std::chrono::steady_clock::now();
  auto reply = ctx.fabrics.create(*options);
  if (!reply) {
    ConnectFacts facts;
    facts.opts = opts;
    facts.err = reply.error().sys_errno;
    facts.kernel = ctx.kmsg.since_mark();
    facts.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    facts.record = find_own_attempt(facts.kernel, ctx.pid);
    // Another connect of the same association won the race (udev and a boot unit, two
    // connect-alls): the kernel refused this one, and the controller exists.
    if (facts.err == EALREADY)
      if (auto o = existing_association(ctx, scan_topology(ctx.fs), opts)) return *o;
    facts.env = gather_environment(ctx, opts);
    Diagnosis d = explain_connect_failure(facts);
    Error e = make_error(ErrorCode::kConnect,
                         fmt::format("connect to {}:{} ({}) failed: {}", opts.traddr,
                                     opts.trsvcid.empty() ? kDefaultRdmaPort : opts.trsvcid,
                                     opts.nqn,
                                     facts.err ? std::strerror(facts.err) : reply.error().message),
                         d.cause, d.fix);
    e.evidence = std::move(d.evidence);
    e.sys_errno = facts.err;
    e.reason = std::string(failure_class_name(d.cls));
    e.record = std::move(d.record);
    if (d.cls == FailureClass::kModuleMissing || d.cls == FailureClass::kNoRdmaDevice ||
        d.cls == FailureClass::kPermission || d.cls == FailureClass::kPortDown)
      e.code = ErrorCode::kEnvironment;
    return e;
  }
  auto parsed = parse_connect_reply(*reply);
  if (!parsed) return parsed.error();
  out.instance = parsed->instance;
  out.cntlid = parsed->cntlid;
  out.device = fmt::format("nvme{}", parsed->instance);
  return out;
}

Result<std::vector<ConfigEntry>> read_config_json(Context& ctx, const std::string& path) {
  if (path.empty() || path == "none") return std::vector<ConfigEntry>{};
  auto text = ctx.fs.read(path);
  if (!text) {
    if (text.error().sys_errno == ENOENT || text.error().sys_errno == ENOTDIR) {
      if (ctx.verbose) ctx.out.note(fmt::format("note: no {}; no options taken from it", path));
      return std::vector<ConfigEntry>{};
    }
    Error e = text.error();
    e.code = ErrorCode::kConfig;
    e.fix = fmt::format("make {} readable, or pass --config none to leave it out", path);
    return e;
  }
  auto entries = parse_config_json(*text, path);
  if (!entries) {
    Error e = entries.error();
    if (e.fix.empty())
      e.fix = fmt::format("correct {}, or pass --config none to leave it out", path);
    return e;
  }
  return entries;
}

Status apply_config_json(Context& ctx, const std::string& path, ConnectOptions& opts) {
  if (opts.traddr.empty() || opts.nqn.empty()) return Ok{};  // connect_controller() says what is missing
  auto entries = read_config_json(ctx, path);
  if (!entries) return entries.error();
  const std::string hostnqn =
      opts.hostnqn.empty() ? check_host_identity(read_host_identity(ctx)).hostnqn : opts.hostnqn;
  const ConfigEntry* port = find_config_port(*entries, opts, hostnqn);
  if (!port) return Ok{};
  if (!port->skip.empty())
    return make_error(ErrorCode::kConfig, fmt::format("{}: {}", port->source, port->skip),
                      "the configuration file's port for this controller has a value rnvme cannot "
                      "use, and connecting without it could mean connecting otherwise than meant",
                      fmt::format("correct {}, or pass --config none to leave it out", path));
  if (ctx.verbose)
    ctx.out.note(fmt::format("note: options not on the command line come from {}", port->source));
  for (const auto& n : port->opts.ignored) ctx.out.note(fmt::format("{}: {}", port->source, n));
  fill_unset(opts, port->opts);
  return Ok{};
}

Status delete_controller(Context& ctx, const std::string& name) {
  if (ctx.dry_run) return Ok{};
  auto st = ctx.fs.write(fmt::format("/sys/class/nvme/{}/delete_controller", name), "1");
  if (!st) {
    Error e = st.error();
    e.message = fmt::format("cannot delete controller {}: {}", name, e.message);
    return e;
  }
  return Ok{};
}

Status delete_controllers(Context& ctx, const std::vector<std::string>& names,
                          std::vector<std::pair<std::string, std::string>> skipped,
                          std::string nqn) {
  DisconnectOutcome out;
  out.dry_run = ctx.dry_run;
  out.skipped = std::move(skipped);
  out.nqn = std::move(nqn);
  std::optional<Error> first;
  // one failure does not keep the others connected; the output says what went and what did not
  for (const auto& n : names) {
    if (auto st = delete_controller(ctx, n); !st) {
      out.failed.emplace_back(n, st.error().message);
      if (!first) first = st.error();
    } else {
      out.devices.push_back(n);
    }
  }
  ctx.out.print(out);
  if (!first) return Ok{};
  // the first failure's kind (and exit status), with the count
  first->message = fmt::format("{} of {} controllers could not be deleted; {}", out.failed.size(),
                               names.size(), first->message);
  return *first;
}

}  // namespace rnvme
