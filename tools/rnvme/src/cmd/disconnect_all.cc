#include "cmd/commands.h"
#include "sys/sysfs.h"

namespace rnvme {

// The RDMA controllers (rnvme's and nvme_rdma's) unless -r/-t names another transport: an RDMA tool
// leaves TCP, FC and loop controllers alone.  A controller already being deleted is left to it.
Status run_disconnect_all(Context& ctx, const DisconnectAllArgs& args) {
  std::vector<std::string> names;
  std::vector<std::pair<std::string, std::string>> skipped;
  for (const auto& s : scan_topology(ctx.fs).subsystems)
    for (const auto& c : s.controllers) {
      if (c.transport == "pcie" || c.transport.empty()) continue;
      if (args.transport.empty() ? !is_rdma_transport_name(c.transport)
                                 : c.transport != args.transport)
        continue;
      if (c.state.rfind("deleting", 0) == 0) {
        skipped.emplace_back(c.name, "already being deleted (state " + c.state + ")");
        continue;
      }
      names.push_back(c.name);
    }
  return delete_controllers(ctx, names, std::move(skipped));
}

Action setup_disconnect_all(CLI::App& sub) {
  auto args = std::make_shared<DisconnectAllArgs>();
  // -r is nvme-cli's letter; -t, rnvme's before it, stays an alias (nothing else here uses it).
  sub.add_option("-r,-t,--transport", args->transport, "only controllers of this transport");
  return [args](Context& ctx) { return run_disconnect_all(ctx, *args); };
}

}  // namespace rnvme
