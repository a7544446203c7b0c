// What every subcommand runs against: the OS adapters (real in main, fakes in tests), the
// printer and the global flags. Shared steps (connect one controller, explain a failure, read
// the RDMA inventory) live here so each command file stays a thin sequence of them.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/explain.h"
#include "core/options.h"
#include "core/printer.h"
#include "core/result.h"
#include "sys/fabrics.h"
#include "sys/fs.h"
#include "sys/kmsg.h"
#include "sys/netlink.h"
#include "sys/nvme_admin.h"
#include "sys/route.h"
#include "sys/verbs.h"

namespace rnvme {

struct Context {
  FileSystem& fs;
  FabricsDevice& fabrics;
  KernelLog& kmsg;
  DiscoveryLogSource& dlog;
  RdmaNetlink& netlink;
  NetProbe& net;
  PortQuery& ports;
  Printer& out;
  // libnvme_generate_hostnqn() in main; fixed paths the library reads, so tests give their own
  std::function<Result<GeneratedHostnqn>()> generate_hostnqn;
  bool dry_run = false;
  int verbose = 0;
  long pid = 0;  // this process: picks its own attempt record out of the kernel log
  // A command's exit status when it succeeded but has something to report (doctor: 1 on a
  // warning, 2 on a failure); errors keep their own codes.
  int exit_status = 0;
  // warnings already printed in this run (note_once): connect-all connects many controllers
  std::set<std::string> said = {};
};

// ctx.out.note(text), once per run.
void note_once(Context& ctx, const std::string& text);

// Netlink inventory (sysfs when netlink is unavailable) plus the sysfs-only details.
Result<std::vector<RdmaDevice>> rdma_inventory(Context& ctx);

// /etc/nvme/hostnqn and /etc/nvme/hostid (sys/host_identity.h), the values given taking their
// place; for a host NQN file that is missing or blank, libnvme's generated host NQN
// (ctx.generate_hostnqn, checked) stands in, as nvme-cli's connect, discover and show-hostnqn
// take it.
HostIdentityInput read_host_identity(Context& ctx, std::string_view given_hostnqn = {},
                                     std::string_view given_hostid = {});

// Fills hostnqn/hostid from /etc/nvme when not given and checks that the pair agrees.
HostCheck resolve_host_identity(Context& ctx, ConnectOptions& opts);

EnvironmentFacts gather_environment(Context& ctx, const ConnectOptions& opts);

// The one path to /dev/nvme-fabrics: identity check, validation, write, and on failure the
// explanation. With ctx.dry_run nothing is written.
Result<ConnectOutcome> connect_controller(Context& ctx, ConnectOptions opts);

// -J/--config of connect, discover and connect-all: nvme-cli's config.json at `path`, or nothing
// for "none" (or ""). A file that does not exist is no configuration, as with nvme-cli; one that
// cannot be read or parsed is an error (exit 3).
Result<std::vector<ConfigEntry>> read_config_json(Context& ctx, const std::string& path);
// Fills what `opts` (connect's or discover's, before any file is read) leaves unset from the port
// of the config.json at `path` that is this controller (find_config_port). That port with a value
// rnvme cannot use is an error: the file meant something for this controller.
Status apply_config_json(Context& ctx, const std::string& path, ConnectOptions& opts);

Status delete_controller(Context& ctx, const std::string& name);
// Deletes every controller in `names`, going on past failures; prints what was deleted, what
// failed and `skipped` (device, why); an error when any delete failed.  `nqn`: disconnect -n's
// argument, for its summary line (DisconnectOutcome::nqn).
Status delete_controllers(Context& ctx, const std::vector<std::string>& names,
                          std::vector<std::pair<std::string, std::string>> skipped = {},
                          std::string nqn = {});

}  // namespace rnvme
