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

// ------------------------------------------------------------------ the output model

struct TuneReport {
  std::string action;     // show | apply | revert
  std::string profile;    // show/apply: the profile; revert: the one reverted
  bool dry_run = false;
  std::vector<std::string> notes;  // one per controller and device: what was found
  std::vector<TuneKnob> knobs;
  std::string summary;    // "3 set, 12 already as the profile has them", "nothing to revert"
};

}  // namespace rnvme
