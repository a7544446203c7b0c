// rnvme's per-queue telemetry (the module's /sys/class/nvme/nvmeN/rnvme/telemetry, described by
// telemetry_layout; Documentation/rnvme.rst "Telemetry"): decoding, percentiles from the
// log-linear latency histograms, and the Prometheus text exposition. Pure: no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace rnvme {

struct HistGeometry {
  int buckets = 0;     // including the first (below 2^min_shift ns) and the last (overflow)
  int min_shift = 0;   // the first bucket ends at 2^min_shift ns
  int sub_bits = 0;    // 2^sub_bits buckets per power of two
};

// Upper bound of bucket `b` in ns; nullopt for the overflow bucket (+Inf).
std::optional<uint64_t> bucket_upper_ns(const HistGeometry& g, int b);

// The `p`-th percentile (0 < p <= 100) of a histogram in ns: the upper bound of the bucket the
// percentile falls in (so never below the true value); nullopt when the histogram is empty,
// UINT64_MAX when it falls in the overflow bucket.
std::optional<uint64_t> percentile_ns(const HistGeometry& g, const std::vector<uint64_t>& hist,
                                      double p);

struct QueueTelemetry {
  int qid = 0;
  bool poll = false;
  bool live = false;
  std::map<std::string, uint64_t> counters;             // scalar name -> value (gauges included)
  std::map<std::string, std::vector<uint64_t>> hist;    // class (read/write/other) -> buckets
  uint64_t get(const std::string& name) const {
    auto it = counters.find(name);
    return it == counters.end() ? 0 : it->second;
  }
};

// rnvme.ko's failover hold of one controller (/sys/class/nvme/nvmeN/rnvme/held_commands, ...;
// Documentation/rnvme.rst, "Error recovery").  A value is nullopt when its file is absent (an
// rnvme.ko older than the hold) or holds no number: not available, never an error.
struct FailoverHold {
  std::optional<uint64_t> held_commands;     // commands held since the controller was created
  std::optional<uint64_t> held_now;          // held right now
  std::optional<uint64_t> last_hold_ms;      // how long the latest hold lasted
  std::optional<uint64_t> failover_hold_ms;  // the current association's hold; 0: failover_hold=N
  std::optional<uint64_t> cqt_ms;            // the controller's Command Quiesce Time; 0: none
  bool any() const { return held_commands || held_now || last_hold_ms || failover_hold_ms || cqt_ms; }
};

// The values of FailoverHold, one entry each in the order they are shown: the sysfs file (also
// the JSON key) and the Prometheus family.  The reader, the JSON and the exposition all walk
// this one table.
struct FailoverHoldField {
  const char* file;
  std::optional<uint64_t> FailoverHold::*value;
  const char* metric;   // milliseconds are exported in seconds, the Prometheus base unit
  bool counter;         // else a gauge
  bool ms;
  const char* help;
};
std::span<const FailoverHoldField> failover_hold_fields();

struct CtrlTelemetry {
  std::string device;             // nvme0
  std::string rdma_device;        // rxe0, or empty
  int version = 0;
  bool enabled = false;
  uint64_t ns_since_reset = 0;
  HistGeometry geometry;
  std::vector<std::string> scalars;   // in record order
  std::vector<std::string> gauges;    // the scalars a reset does not zero
  std::vector<std::string> classes;   // histogram classes, in record order
  std::vector<QueueTelemetry> queues;
  // The RDMA port's own counters (rdma netlink statistics), name -> value; empty if unknown.
  std::map<std::string, uint64_t> rdma_counters;
  FailoverHold hold;
};

// Decodes telemetry_layout's text and the telemetry file's bytes (host byte order u64s).
// Every inconsistency (magic, version, sizes, names) is an error, never a guess.
Result<CtrlTelemetry> decode_telemetry(std::string_view layout, std::string_view blob);

// Sum of a counter over the I/O queues (qid >= 1), or over all queues.
uint64_t sum_counter(const CtrlTelemetry& t, const std::string& name, bool io_only);
// Buckets of a class summed over the I/O queues.
std::vector<uint64_t> sum_hist(const CtrlTelemetry& t, const std::string& cls);

// One line of help per counter, shared by the Prometheus HELP lines and the documentation test.
std::string counter_help(const std::string& name);

// Prometheus text exposition format 0.0.4 of the controllers.
std::string render_prometheus(const std::vector<CtrlTelemetry>& ctrls);

}  // namespace rnvme
