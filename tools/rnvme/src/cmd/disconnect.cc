#include <fmt/format.h>

#include "cmd/commands.h"
#include "sys/sysfs.h"

namespace rnvme {
namespace {

Status disconnect_each(Context& ctx, const std::vector<std::string>& names) {
  DisconnectOutcome out;
  out.dry_run = ctx.dry_run;
  for (const auto& n : names) {
    if (auto st = delete_controller(ctx, n); !st) return st;
    out.devices.push_back(n);
  }
  ctx.out.print(out);
  return Ok{};
}

}  // namespace

Status run_disconnect(Context& ctx, const DisconnectArgs& args) {
  if (args.nqn.empty() == args.device.empty())
    return make_error(ErrorCode::kUsage, "disconnect needs exactly one of --nqn or --device");
  std::vector<std::string> names;
  if (!args.device.empty()) {
    std::string dev = args.device;
    if (dev.rfind("/dev/", 0) == 0) dev = dev.substr(5);
    if (!controller_instance(dev))
      return make_error(ErrorCode::kUsage, fmt::format("'{}' is not a controller name", args.device),
                        {}, "pass a controller such as nvme0 or /dev/nvme0");
    if (!ctx.fs.exists(fmt::format("{}/{}", kNvmeClass, dev)))
      return make_error(ErrorCode::kNotFound, fmt::format("no controller {}", dev), {},
                        "'rnvme list' shows the controllers");
    names.push_back(dev);
  } else {
    for (const auto& s : scan_topology(ctx.fs).subsystems)
      for (const auto& c : s.controllers)
        if (c.subsysnqn == args.nqn || (c.subsysnqn.empty() && s.nqn == args.nqn))
          names.push_back(c.name);
    if (names.empty())
      return make_error(ErrorCode::kNotFound,
                        fmt::format("no controller is connected to {}", args.nqn), {},
                        "'rnvme list' shows the connected subsystems");
  }
  return disconnect_each(ctx, names);
}

Action setup_disconnect(CLI::App& sub) {
  auto args = std::make_shared<DisconnectArgs>();
  sub.add_option("-n,--nqn", args->nqn, "disconnect every controller of this subsystem");
  sub.add_option("-d,--device", args->device, "disconnect this controller (nvmeN)");
  return [args](Context& ctx) { return run_disconnect(ctx, *args); };
}

Status run_disconnect_all(Context& ctx, const DisconnectAllArgs& args) {
  std::vector<std::string> names;
  for (const auto& s : scan_topology(ctx.fs).subsystems)
    for (const auto& c : s.controllers) {
      if (c.transport == "pcie" || c.transport.empty()) continue;
      if (!args.transport.empty() && c.transport != args.transport) continue;
      names.push_back(c.name);
    }
  return disconnect_each(ctx, names);
}

Action setup_disconnect_all(CLI::App& sub) {
  auto args = std::make_shared<DisconnectAllArgs>();
  sub.add_option("-t,--transport", args->transport, "only controllers of this transport");
  return [args](Context& ctx) { return run_disconnect_all(ctx, *args); };
}

}  // namespace rnvme
