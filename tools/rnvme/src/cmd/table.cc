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
      {"version", "print the versions of rnvme and of libnvme (the same as --version)", setup_version},
  };
  return table;
}

void add_quiet_option(CLI::App& app, bool& quiet) {
  app.add_flag("--quiet", quiet,
               "print no notes or warnings on stderr (options ignored for RDMA, -v chatter); "
               "errors and the result still");
}

}  // namespace rnvme
