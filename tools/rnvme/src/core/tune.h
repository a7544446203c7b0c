// `rnvme tune`: the knobs that matter for an NVMe-oF RDMA host, the three profiles' values for
// them (each with why and where that comes from), the state file that lets `revert` put back
// exactly what `apply` replaced, the connect-time defaults file and the tuned export. Pure: the
// facts come in (cmd/tune.cc reads them from sysfs, procfs, configfs and RDMA netlink), the plan
// goes out.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/options.h"
#include "core/result.h"

namespace rnvme {

enum class TuneProfile { kLatency, kThroughput, kBalanced };
inline constexpr TuneProfile kAllTuneProfiles[] = {TuneProfile::kLatency, TuneProfile::kThroughput,
                                                   TuneProfile::kBalanced};
std::optional<TuneProfile> parse_tune_profile(std::string_view name);
std::string_view tune_profile_name(TuneProfile p);

// Where apply records what it replaced, and where the connect-time choices go.
inline constexpr const char* kTuneStatePath = "/var/lib/rnvme/tune.json";
inline constexpr const char* kTuneDefaultsPath = "/etc/rnvme/tune.conf";
inline constexpr const char* kRdmaCmConfigfs = "/sys/kernel/config/rdma_cm";

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; nullopt when it is not a CPU list.
std::optional<std::vector<int>> parse_cpu_list(std::string_view s);
// The kernel's notation (sorted, ranges): {0,1,2,3,8} -> "0-3,8".
std::string format_cpu_list(std::vector<int> cpus);
// The selected scheduler of a queue/scheduler file: "[mq-deadline] kyber none" -> "mq-deadline";
// a file without brackets ("none") is its only word.
std::string selected_scheduler(std::string_view file);

// ------------------------------------------------------------------ the facts

struct TuneNamespaceFacts {
  std::string name;       // nvme0c0n1, nvme0n1
  std::string ctrl;       // the controller it was found under (a head: the first one)
  std::string queue_dir;  // /sys/block/NAME/queue
  std::map<std::string, std::string> attrs;  // file name -> content as read, for those present
};

struct TuneIrqFacts {
  int irq = 0;
  std::string name;      // as /proc/interrupts ends the line: mlx5_comp3@pci:0000:3b:00.0
  int vector = 0;        // completion vector number from the name (mlx5_comp3 -> 3)
  std::string affinity;  // /proc/irq/N/smp_affinity_list as read
};

struct TuneDeviceFacts {
  std::string name;         // mlx5_0
  bool software = false;    // no PCI device (rxe, siw)
  int numa_node = -1;
  std::vector<int> local_cpus;  // the device's NUMA-local online CPUs
  std::vector<TuneIrqFacts> irqs;
  std::optional<bool> moderation;     // adaptive moderation; nullopt: not reported
  std::string moderation_error;       // why it could not be read
  std::vector<int> ports;
  bool cm_dir = false;                // kRdmaCmConfigfs/NAME exists
  bool configfs = false;              // kRdmaCmConfigfs exists (rdma_cm's configfs is mounted)
  std::map<int, std::string> tos;     // port -> default_roce_tos as read (when cm_dir)
  std::optional<int> lossless_tos;    // a ToS that lands on a PFC priority (doctor's DCB reading)
  std::string lossless_why;           // how, or why there is none
};

struct TuneCtrlFacts {
  std::string name;         // nvme0
  std::string driver;       // rnvme | nvme_rdma
  std::string rdma_device;  // empty: not known
  std::vector<std::string> namespaces;
};

struct TuneFacts {
  int cpus = 1;  // online CPUs
  std::vector<TuneCtrlFacts> ctrls;
  std::vector<TuneNamespaceFacts> namespaces;
  std::vector<TuneDeviceFacts> devices;
  std::optional<std::string> defaults;  // kTuneDefaultsPath's content; nullopt: no file
};

// ------------------------------------------------------------------ the knobs

enum class KnobKind {
  kFile,        // a sysfs/procfs/configfs attribute: write the target
  kModeration,  // RDMA netlink: adaptive moderation of `path` (the device)
  kDefaults,    // a key of kTuneDefaultsPath
};

struct TuneKnob {
  std::string scope;    // nvme0c0n1, mlx5_0, "mlx5_0 irq 45", "connect"
  std::string name;     // scheduler, nomerges, smp_affinity_list, adaptive_moderation, ...
  KnobKind kind = KnobKind::kFile;
  std::string path;     // the file; the device for kModeration; the key's file for kDefaults
  std::string current;  // as shown and compared: "mq-deadline", "0-7", "on", "(not set)"
  std::optional<std::string> target;  // what the profile sets; nullopt: left alone
  std::string why;      // one line
  std::string source;   // where that comes from
  std::string needs;    // a file knob whose parent must be created first (configfs group), or ""
  // all three profiles' targets (show; "-" where left alone)
  std::map<std::string, std::string> profiles;
  std::string status;   // filled by the command: ok, would set, set, refused: ..., restored, ...

  bool changes() const { return target && *target != current; }
};

// The knobs of `f` under `p`, in a fixed order (controller by controller: namespaces, then the
// RDMA device, then the connect defaults once). Every profile yields the same knobs; those it
// leaves alone have no target.
std::vector<TuneKnob> plan_tune(const TuneFacts& f, TuneProfile p);

// What a profile writes into kTuneDefaultsPath, and reading it back.
std::string render_tune_defaults(const std::map<std::string, int>& values, TuneProfile p);
std::map<std::string, int> parse_tune_defaults(std::string_view text);
// Fills nr_io_queues, nr_poll_queues and queue_size of `opts` that are unset from `defaults`
// (not for a discovery controller: it has no I/O queues). Returns the names filled.
std::vector<std::string> apply_tune_defaults(ConnectOptions& opts,
                                             const std::map<std::string, int>& defaults);

// A tuned profile (tuned.conf) with the same block-queue settings, for sites that use tuned.
std::string render_tuned_conf(const std::vector<TuneKnob>& knobs, TuneProfile p);

// ------------------------------------------------------------------ the state file

// One thing apply changed, with what was there before.
struct TuneStateEntry {
  std::string kind;  // file | moderation | mkdir | defaults
  std::string path;  // the file, the RDMA device, the configfs directory
  std::string knob;  // "nvme0c0n1 scheduler", for messages
  std::optional<std::string> original;  // as read (a file's bytes; "on"/"off"); nullopt: absent
  std::string restore;  // what to write to get `original` back (file: sysfs takes a value)
};

struct TuneState {
  std::string profile;
  std::vector<std::string> ctrls;  // as given to apply; empty: every RDMA controller
  std::vector<TuneStateEntry> entries;

  const TuneStateEntry* find(std::string_view kind, std::string_view path) const;
};
nlohmann::json to_json(const TuneState& s);
Result<TuneState> parse_tune_state(std::string_view text);

// ------------------------------------------------------------------ apply --reconnect

// The connect-time values of `p` on a host with `cpus` online CPUs, by the defaults file's keys:
// nr_io_queues, nr_poll_queues, queue_size.
std::map<std::string, int> tune_connect_values(int cpus, TuneProfile p);

// One namespace a controller serves.
struct TunePathFacts {
  std::string path;  // nvme0c3n1 under native multipath; nvme3n1 without it
  std::string head;  // nvme0n1 (the block device I/O goes to); empty without native multipath
  // The other controllers with a path to `head` that serves I/O now: controller live, and the
  // path's ANA state optimized or non-optimized (or no ANA).
  std::vector<std::string> others;
};

// What `apply --reconnect` needs to know of one controller, read from sysfs.
struct TuneReconnectFacts {
  std::string name;   // nvme3
  std::string state;  // live, connecting, resetting, ...
  bool discovery = false;
  std::optional<int> queue_count;  // sysfs queue_count: the admin queue + every I/O queue
  std::optional<int> sqsize;       // sysfs sqsize: queue_size - 1
  std::vector<TunePathFacts> paths;
  // What it was connected with, as far as sysfs shows it (the queue options unset); it is
  // connected again with these and the profile's queue options.
  ConnectOptions original;
  std::string unreadable;  // why its connect parameters cannot be read; "" when they can
};

// Whether `c`'s queue layout is the one `want` (tune_connect_values) gives: queue_count = 1 +
// nr_io_queues + nr_poll_queues, sqsize = queue_size - 1. An attribute that cannot be read
// differs.
bool reconnect_queues_match(const TuneReconnectFacts& c, const std::map<std::string, int>& want);
// Why re-creating `c` would stop I/O (or cannot be done), or nullopt when every namespace it
// serves has another path that serves I/O: "nvme3 is the only live path of nvme1n1: ...".
std::optional<std::string> reconnect_refusal(const TuneReconnectFacts& c);

// One controller of `apply --reconnect`: the plan, then what happened.
struct TuneReconnect {
  std::string ctrl;                     // as found: nvme3
  std::vector<std::string> namespaces;  // the block devices it serves a path of
  std::optional<int> io_queues;         // now: queue_count - 1 (every I/O queue, poll included)
  std::optional<int> queue_size;        // now: sqsize + 1
  int want_io_queues = 0;               // the profile's nr_io_queues
  int want_poll_queues = 0;             // the profile's nr_poll_queues
  int want_queue_size = 0;              // the profile's queue_size
  // ok (already as the profile wants) | left alone | refused | would reconnect | reconnected |
  // failed | not done
  std::string status;
  std::string why;           // one line: the reason, or what happened
  int order = 0;             // 1, 2, ...: the order of the re-creates; 0: not re-created
  std::string options;       // the connect string of the re-create (secrets hidden)
  std::string restore_options;  // the connect string that puts the old layout back on failure
  std::string new_ctrl;      // the controller it became, or was restored as
  std::optional<int> new_io_queues;   // as the new controller shows them
  std::optional<int> new_queue_size;
  ConnectOptions opts;       // the re-create's options (not printed: they may hold secrets)
  ConnectOptions restore;    // the restore's options
};

// The plan for `ctrls` (in that order): which are re-created, with which options, which are
// already as `want` has them, which are refused and why. Pure; nothing is checked against the
// kernel but what the facts say.
std::vector<TuneReconnect> plan_reconnect(const std::vector<TuneReconnectFacts>& ctrls,
                                          const std::map<std::string, int>& want);

// ------------------------------------------------------------------ the output model

struct TuneReport {
  std::string action;     // show | apply | revert
  std::string profile;    // show/apply: the profile; revert: the one reverted
  bool dry_run = false;
  std::vector<std::string> notes;  // one per controller and device: what was found
  std::vector<TuneKnob> knobs;
  bool reconnect = false;                 // apply --reconnect
  std::vector<TuneReconnect> reconnects;  // its controllers, in the order of the plan
  std::string summary;    // "3 set, 12 already as the profile has them", "nothing to revert"
};

}  // namespace rnvme
