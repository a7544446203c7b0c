#include <fmt/format.h>

#include "cmd/commands.h"
#include "core/device_arg.h"
#include "sys/sysfs.h"

namespace rnvme {

Status run_disconnect(Context& ctx, const DisconnectArgs& args) {
  if (args.nqn.empty() == args.device.empty())
    return make_error(ErrorCode::kUsage, "disconnect needs exactly one of --nqn or --device");
  std::vector<std::string> names;
  if (!args.device.empty()) {
    auto arg = controller_arg(args.device);
    if (!arg) return arg.error();
    const std::string& dev = *arg;
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
  return delete_controllers(ctx, names);
}

Action setup_disconnect(CLI::App& sub) {
  auto args = std::make_shared<DisconnectArgs>();
  sub.add_option("-n,--nqn", args->nqn, "disconnect every controller of this subsystem");
  sub.add_option("-d,--device", args->device, "disconnect this controller (nvmeN)");
  return [args](Context& ctx) { return run_disconnect(ctx, *args); };
}

}  // namespace rnvme
