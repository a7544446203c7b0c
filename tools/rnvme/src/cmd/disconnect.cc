#include <fmt/format.h>

#include "cmd/commands.h"
#include "core/device_arg.h"
#include "sys/sysfs.h"

#include <set>

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
    return delete_controllers(ctx, names);
  }
  // nvme-cli's -n: NQNs separated by commas (no NQN the kernel takes has one); none connected is
  // not an error there (exit 0, "NQN:<nqn> disconnected 0 controller(s)"), nor here
  std::set<std::string> nqns;
  for (std::string_view rest = args.nqn; !rest.empty();) {
    auto comma = rest.find(',');
    if (auto one = rest.substr(0, comma); !one.empty()) nqns.emplace(one);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  for (const auto& s : scan_topology(ctx.fs).subsystems)
    for (const auto& c : s.controllers)
      if (nqns.contains(c.subsysnqn.empty() ? s.nqn : c.subsysnqn)) names.push_back(c.name);
  return delete_controllers(ctx, names, {}, args.nqn);
}

Action setup_disconnect(CLI::App& sub) {
  auto args = std::make_shared<DisconnectArgs>();
  sub.add_option("-n,--nqn", args->nqn,
                 "disconnect every controller of this subsystem (NQNs separated by commas: of each)");
  sub.add_option("-d,--device", args->device, "disconnect this controller (nvmeN)");
  return [args](Context& ctx) { return run_disconnect(ctx, *args); };
}

}  // namespace rnvme
