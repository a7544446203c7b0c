#include <fmt/format.h>

#include "cmd/commands.h"

namespace rnvme {

const std::vector<Command>& command_table() {
  static const std::vector<Command> table = {
      {"discover", "read the discovery log page of a discovery controller", setup_discover},
      {"connect", "connect to an NVMe subsystem over RDMA", setup_connect},
      {"connect-all", "connect to everything a discovery controller or config file lists",
       setup_connect_all},
      {"disconnect", "disconnect controllers by subsystem NQN or device", setup_disconnect},
      {"disconnect-all", "disconnect every fabrics controller", setup_disconnect_all},
      {"list", "show subsystems, controllers and namespaces", setup_list},
      {"rdma", "show RDMA devices, ports and GIDs; add or delete Soft-RoCE links", setup_rdma},
      {"stats", "per-queue counters and latency percentiles of rnvme controllers (text, JSON, Prometheus)",
       setup_stats},
      {"top", "live per-queue IOPS and latency of rnvme controllers", setup_top},
      {"hostnqn", "show, generate or check /etc/nvme/hostnqn and /etc/nvme/hostid", setup_hostnqn},
      {"doctor", "check RDMA devices, the path to a target, lossless settings, host identity, "
                 "modules and queue budget; say how to fix what is wrong",
       setup_doctor},
      {"tune", "show, apply or revert the host settings that matter for NVMe-oF RDMA (block "
               "queues, completion IRQs, CQ moderation, ToS, queue counts); export them to tuned",
       setup_tune},
  };
  return table;
}

void add_connect_options(CLI::App& app, ConnectOptions& opts) {
  for (const auto& spec : option_table()) {
    std::string names = spec.short_name ? fmt::format("-{},--{}", spec.short_name, spec.long_name)
                                        : fmt::format("--{}", spec.long_name);
    if (!spec.alias.empty()) names += fmt::format(",--{}", spec.alias);
    const OptionSpec* s = &spec;
    if (spec.is_flag()) {
      app.add_flag_callback(names, [&opts, s] { (void)set_option(opts, *s, ""); },
                            std::string(spec.help));
      continue;
    }
    app.add_option_function<std::string>(
           names,
           [&opts, s](const std::string& v) {
             if (auto st = set_option(opts, *s, v); !st)
               throw CLI::ValidationError(
                   fmt::format("--{}", s->long_name),
                   st.error().fix.empty() ? st.error().message
                                          : st.error().message + "; " + st.error().fix);
           },
           std::string(spec.help))
        ->type_name(spec.kind == OptionKind::kInt ? "NUM" : "TEXT");
  }
}

void add_quiet_option(CLI::App& app, bool& quiet) {
  app.add_flag("--quiet", quiet,
               "print no notes or warnings on stderr (options ignored for RDMA, -v chatter); "
               "errors and the result still");
}

}  // namespace rnvme
