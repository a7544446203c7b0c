// The subcommands. Each file in cmd/ implements one: its arguments, its CLI11 binding and its
// run function (called directly by tests with fakes in the Context).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cmd/context.h"
#include "core/config.h"
#include "core/connect_cli.h"
#include "core/options.h"
#include "core/version.h"

namespace rnvme {

using Action = std::function<Status(Context&)>;

struct Command {
  std::string_view name;
  std::string_view help;
  Action (*setup)(CLI::App& sub);  // registers the options, returns the action bound to them
};
const std::vector<Command>& command_table();

// nvme-cli's --quiet (connect, connect-all, discover): no notes or warnings on stderr.
void add_quiet_option(CLI::App& app, bool& quiet);

// keep_alive_tmo of a persistent discovery controller when none is given (nvme-cli's
// NVMF_DEF_DISC_TMO, seconds).
inline constexpr int kPersistentDiscoveryKato = 30;

struct DiscoverArgs {
  ConnectOptions opts;
  // -J: options not given come from this discovery controller's port there; "none": no file
  std::string config_json = std::string(kConfigJsonPath);
  std::string device;     // use this existing discovery controller instead of connecting one
  bool persistent = false;
  bool quiet = false;     // errors only on stderr
};
Status run_discover(Context& ctx, DiscoverArgs args);
Action setup_discover(CLI::App& sub);

struct ConnectArgs {
  ConnectOptions opts;
  // -J: options not given come from this controller's port there; "none": no file
  std::string config_json = std::string(kConfigJsonPath);
  bool quiet = false;     // errors only on stderr
};
Status run_connect(Context& ctx, const ConnectArgs& args);
Action setup_connect(CLI::App& sub);

struct ConnectAllArgs {
  ConnectOptions opts;    // discovery controller and template for every connection
  std::string discovery_conf = std::string(kDiscoveryConfPath);
  std::string config_json = std::string(kConfigJsonPath);  // "none": no file
  std::string event;      // a discovery controller as TRADDR_TRSVCID
  std::string device;     // a persistent discovery controller whose log changed (nvmeN)
  std::string lock_file = "/run/rnvme/connect-all.lock";  // empty: no lock
  int lock_wait_s = 300;
  bool quiet = false;     // errors only on stderr
  // print what would be connected (config.json's layout, secrets hidden) instead of connecting
  bool dump_config = false;
  // -p/--persistent, --force: for every discovery controller (a discovery.conf line may say so
  // for its own)
  DiscoveryFlags discovery;
  std::string raw;        // nvme-cli's -r/--raw FILE: refused
};
// connect-all follows the RDMA referrals of a discovery log (subtype 1, another discovery
// service), as nvme-cli does, within bounds: no discovery service is read twice in one run, a
// chain of referrals from a configured discovery controller is followed at most
// kMaxReferralDepth deep, and at most kMaxReferredDiscovery discovery controllers are reached
// through referrals per run. A referral beyond a bound is reported skipped, with the bound.
inline constexpr int kMaxReferralDepth = 4;
inline constexpr size_t kMaxReferredDiscovery = 16;
Status run_connect_all(Context& ctx, const ConnectAllArgs& args);
Action setup_connect_all(CLI::App& sub);

struct DisconnectArgs {
  std::string nqn;
  std::string device;
};
Status run_disconnect(Context& ctx, const DisconnectArgs& args);
Action setup_disconnect(CLI::App& sub);

struct DisconnectAllArgs {
  std::string transport;  // empty: every fabrics transport
};
Status run_disconnect_all(Context& ctx, const DisconnectAllArgs& args);
Action setup_disconnect_all(CLI::App& sub);

// `rnvme version` and `rnvme --version` (main): the tool's and libnvme's versions.
Status run_version(Context& ctx, const VersionInfo& info);
Action setup_version(CLI::App& sub);

Status run_list(Context& ctx);
Action setup_list(CLI::App& sub);

struct RdmaArgs {
  std::vector<std::string> words;  // "link add NAME type rxe netdev DEV" | "link del NAME" | "show"
};
Status run_rdma(Context& ctx, const RdmaArgs& args);
Action setup_rdma(CLI::App& sub);

struct HostnqnArgs {
  std::string action = "show";  // show | generate | check
  bool force = false;
};
Status run_hostnqn(Context& ctx, const HostnqnArgs& args);
Action setup_hostnqn(CLI::App& sub);

struct DoctorArgs {
  std::string traddr;            // also check the path to this target
  std::string trsvcid;
  std::optional<int> tos;        // the tos= the connection will use; unset: rdma_cm's default
  bool json = false;             // --json (same as -o json)
  bool dump_snapshot = false;    // print the gathered facts instead of checking them
  std::string snapshot_file;     // check a recorded snapshot instead of this host
};
class FabricProbe;
struct DoctorSnapshot;
DoctorSnapshot gather_doctor_snapshot(Context& ctx, FabricProbe& probe, const DoctorArgs& args);
// Prints the checks and sets ctx.exit_status: 0 all ok, 1 a warning, 2 a failure.
Status run_doctor(Context& ctx, FabricProbe& probe, const DoctorArgs& args);
Action setup_doctor(CLI::App& sub);
struct StatsArgs {
  std::string ctrl;        // empty: every rnvme controller
  bool prometheus = false;
  bool reset = false;
};
// The telemetry of `ctrl` (or of every rnvme controller), with the RDMA ports' counters.
Result<StatsReport> collect_stats(Context& ctx, const std::string& ctrl);
Status run_stats(Context& ctx, const StatsArgs& args);
Action setup_stats(CLI::App& sub);

struct TopArgs {
  std::string ctrl;
  double interval = 2.0;      // seconds between refreshes
  std::string sort = "iops";  // iops | latency
  int iterations = 0;         // 0: until interrupted
};
Status run_top(Context& ctx, const TopArgs& args);
// One frame of `top`: rates over `secs` since `prev`, or averages since the reset, in `sort`'s
// order; the model of both outputs (Printer::print(TopFrame)).
TopFrame top_frame(const StatsReport* prev, const StatsReport& cur, double secs,
                   const std::string& sort);
// That frame as text (80 columns).
std::string render_top(const StatsReport* prev, const StatsReport& cur, double secs,
                       const std::string& sort);
Action setup_top(CLI::App& sub);

struct TuneArgs {
  std::string action;              // show | apply | revert | export-tuned
  std::vector<std::string> ctrls;  // controllers; apply --from-state: the block device, if any
  bool all = false;
  std::string profile;             // latency | throughput | balanced
  bool best_effort = false;
  bool reconnect = false;          // apply: re-create controllers whose queues differ (multipath)
  bool from_state = false;         // reapply the profile of the state file (udev, boot)
  std::string dir;                 // export-tuned
};
// How `tune apply --reconnect` waits for a re-created controller: a monotonic clock in seconds
// and a pause. Tests pass a fake one that moves their fake kernel on.
struct TuneClock {
  std::function<double()> now;
  std::function<void(double seconds)> sleep;
};
TuneClock real_tune_clock();
// show / apply / revert / export-tuned (Documentation/tune.rst).
Status run_tune(Context& ctx, FabricProbe& probe, const TuneArgs& args);  // the real clock
Status run_tune(Context& ctx, FabricProbe& probe, const TuneArgs& args, const TuneClock& clock);
Action setup_tune(CLI::App& sub);

}  // namespace rnvme
