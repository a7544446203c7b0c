#include "cmd/commands.h"
#include "sys/sysfs.h"

namespace rnvme {

Status run_disconnect_all(Context& ctx, const DisconnectAllArgs& args) {
  std::vector<std::string> names;
  for (const auto& s : scan_topology(ctx.fs).subsystems)
    for (const auto& c : s.controllers) {
      if (c.transport == "pcie" || c.transport.empty()) continue;
      if (!args.transport.empty() && c.transport != args.transport) continue;
      names.push_back(c.name);
    }
  return delete_controllers(ctx, names);
}

Action setup_disconnect_all(CLI::App& sub) {
  auto args = std::make_shared<DisconnectAllArgs>();
  sub.add_option("-t,--transport", args->transport, "only controllers of this transport");
  return [args](Context& ctx) { return run_disconnect_all(ctx, *args); };
}

}  // namespace rnvme
