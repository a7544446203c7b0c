#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "cmd/commands.h"
#include "core/hostid.h"
#include "core/number.h"
#include "core/topology.h"
#include "sys/sysfs.h"

namespace rnvme {
namespace {

// One controller's telemetry; a read that raced a reconnect (sizes disagree) is tried again.
Result<CtrlTelemetry> read_ctrl(Context& ctx, const std::string& name) {
  const std::string d = fmt::format("{}/{}/rnvme", kNvmeClass, name);
  Result<CtrlTelemetry> t = make_error(ErrorCode::kFailure, "unreachable");
  for (int attempt = 0; attempt < 3; attempt++) {
    auto layout = ctx.fs.read(d + "/telemetry_layout");
    if (!layout) return layout.error();
    auto blob = ctx.fs.read(d + "/telemetry");
    if (!blob) return blob.error();
    t = decode_telemetry(*layout, *blob);
    if (t) break;
  }
  if (!t) return t;
  t->device = name;
  if (auto r = ctx.fs.read(d + "/rdma_device")) {
    std::string dev = *r;
    while (!dev.empty() && (dev.back() == '\n' || dev.back() == ' ')) dev.pop_back();
    if (dev != "none") t->rdma_device = dev;
  }
  // the failover hold's files: an rnvme.ko older than the hold has none, which leaves them unset
  for (const auto& f : failover_hold_fields())
    if (auto r = ctx.fs.read(fmt::format("{}/{}", d, f.file))) t->hold.*f.value = parse_number<uint64_t>(trim(*r));
  return t;
}

// The RDMA port's counters, when netlink knows the device; the stats go on without them.
void add_rdma_counters(Context& ctx, CtrlTelemetry& t,
                       const Result<std::vector<RdmaDevice>>& devs) {
  if (t.rdma_device.empty() || !devs) return;
  for (const auto& d : *devs) {
    if (d.name != t.rdma_device) continue;
    for (const auto& p : d.ports) {
      auto c = ctx.netlink.port_counters(d.index, p.index);
      if (!c) {
        if (ctx.verbose) ctx.out.note(c.error().message);
        continue;
      }
      for (const auto& [k, v] : *c)
        t.rdma_counters[d.ports.size() > 1 ? fmt::format("port{}.{}", p.index, k) : k] = v;
    }
  }
}

}  // namespace

Result<StatsReport> collect_stats(Context& ctx, const std::string& ctrl) {
  StatsReport rep;
  std::vector<std::string> names;
  if (!ctrl.empty()) {
    if (!is_controller_name(ctrl))
      return make_error(ErrorCode::kUsage, fmt::format("'{}' is not a controller name", ctrl), {},
                        "name a controller like nvme0 ('rnvme list' shows them)");
    if (!ctx.fs.exists(fmt::format("{}/{}", kNvmeClass, ctrl)))
      return make_error(ErrorCode::kNotFound, fmt::format("no controller {}", ctrl), {},
                        "'rnvme list' shows the controllers");
    if (!ctx.fs.exists(fmt::format("{}/{}/rnvme/telemetry", kNvmeClass, ctrl)))
      return make_error(ErrorCode::kNotFound, fmt::format("{} has no rnvme telemetry", ctrl),
                        "it is not an rnvme controller, or rnvme.ko predates telemetry");
    names.push_back(ctrl);
  } else if (auto l = ctx.fs.list(kNvmeClass)) {
    for (const auto& n : *l)
      if (is_controller_name(n) && ctx.fs.exists(fmt::format("{}/{}/rnvme/telemetry", kNvmeClass, n)))
        names.push_back(n);
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      return controller_instance(a).value_or(0) < controller_instance(b).value_or(0);
    });
  }
  Result<std::vector<RdmaDevice>> devs = make_error(ErrorCode::kEnvironment, "not read");
  if (!names.empty()) devs = ctx.netlink.devices();
  for (const auto& n : names) {
    auto t = read_ctrl(ctx, n);
    if (!t) {
      // a controller deleted meanwhile is no error unless it was asked for
      if (ctrl.empty() && !ctx.fs.exists(fmt::format("{}/{}", kNvmeClass, n))) continue;
      return t.error();
    }
    add_rdma_counters(ctx, *t, devs);
    rep.ctrls.push_back(std::move(*t));
  }
  return rep;
}

Status run_stats(Context& ctx, const StatsArgs& args) {
  if (args.reset) {
    auto rep = collect_stats(ctx, args.ctrl);
    if (!rep) return rep.error();
    for (const auto& t : rep->ctrls) {
      const std::string p = fmt::format("{}/{}/rnvme/telemetry_reset", kNvmeClass, t.device);
      if (ctx.dry_run) {
        ctx.out.note(fmt::format("would write 1 to {}", p));
        continue;
      }
      if (auto st = ctx.fs.write(p, "1"); !st) return st;
    }
    return Ok{};
  }
  auto rep = collect_stats(ctx, args.ctrl);
  if (!rep) return rep.error();
  if (args.prometheus) {
    ctx.out.raw(render_prometheus(rep->ctrls));
    return Ok{};
  }
  ctx.out.print(*rep);
  return Ok{};
}

Action setup_stats(CLI::App& sub) {
  auto args = std::make_shared<StatsArgs>();
  sub.add_option("ctrl", args->ctrl, "controller (nvme0); default: every rnvme controller");
  sub.add_flag("--prometheus", args->prometheus,
               "Prometheus text exposition (for node_exporter's textfile collector)");
  sub.add_flag("--reset", args->reset, "zero the counters (writes rnvme/telemetry_reset)");
  return [args](Context& ctx) { return run_stats(ctx, *args); };
}

}  // namespace rnvme
