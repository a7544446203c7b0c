// One Printer renders every model either as text for people or as JSON for programs. JSON keys
// are stable snake_case; numbers are numbers; absent values are null.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "core/discovery.h"
#include "core/doctor.h"
#include "core/explain.h"
#include "core/hostid.h"
#include "core/rdma.h"
#include "core/result.h"
#include "core/telemetry.h"
#include "core/topology.h"
#include "core/tune.h"
#include "core/version.h"

namespace rnvme {

enum class Format { kText, kJson };

// The "version" every JSON document of the tool carries at its top level (errors included).
// Raised when a key is removed or renamed or changes type or meaning; adding keys keeps it.
inline constexpr int kJsonSchemaVersion = 1;

struct ConnectOutcome {
  std::string device;        // nvme3; empty on --dry-run
  int instance = -1;
  int cntlid = -1;
  std::string options;       // the string written (or that would be written)
  bool dry_run = false;
  // The association existed already (find_association): `device` is that controller and nothing
  // was written.
  bool already_connected = false;
};

struct DisconnectOutcome {
  std::vector<std::string> devices;                          // deleted (or would be)
  bool dry_run = false;
  std::vector<std::pair<std::string, std::string>> failed = {};   // device, why its delete failed
  std::vector<std::pair<std::string, std::string>> skipped = {};  // device, why it was left alone
  // disconnect -n: the NQN(s) as given; the text ends with nvme-cli's "NQN:<nqn> disconnected
  // <n> controller(s)", also when none matched
  std::string nqn = {};
};

struct ConnectAllItem {
  std::string source;        // "discovery 10.0.0.1:4420", "config.json", "discovery.conf:3"
  std::string nqn, traddr, trsvcid;
  // connected, already_connected, would_connect, would_discover, followed (a referral whose
  // log was read), skipped, failed
  std::string status;
  std::string device;        // when connected
  std::string options;
  std::string detail;        // why skipped or failed
  std::string failure_class; // failure_class_name() when failed
  std::string via;           // "traddr:trsvcid" of the discovery service whose log listed it
};
struct ConnectAllOutcome {
  std::vector<ConnectAllItem> items;
  std::string note;  // why there is nothing to do, when there is not
};

// `rnvme stats`: the telemetry of each controller (with its RDMA port's counters).
struct StatsReport {
  std::vector<CtrlTelemetry> ctrls;
};

// `rnvme top`: one refresh, a row per queue in the order shown (by IOPS, or by p99 latency).
struct TopQueue {
  std::string device;     // nvme0
  int qid = 0;            // 0: the admin queue
  std::string type;       // admin, io, poll
  double seconds = 0;     // what the rates are over: the interval, or the time since the reset
  double iops = 0;
  double mib_per_s = 0;
  std::optional<uint64_t> p50_ns, p99_ns;  // bucket upper bounds; none without commands
  uint64_t errors = 0;    // flushed or failed work completions, host-ended, requeued, failed over
};
struct TopFrame {
  size_t controllers = 0;
  bool since_reset = false;  // the first refresh: averages since each controller's reset
  double interval_s = 0;     // otherwise the rates are over this interval
  std::string sort;          // iops | latency
  std::vector<TopQueue> queues;
};

nlohmann::json to_json(const DiscoveryLog& log);
nlohmann::json to_json(const Topology& t);
nlohmann::json to_json(const std::vector<RdmaDevice>& devs);
nlohmann::json to_json(const HostCheck& hc);
nlohmann::json to_json(const ConnectOutcome& c);
nlohmann::json to_json(const DisconnectOutcome& d);
nlohmann::json to_json(const ConnectAllOutcome& c);
nlohmann::json to_json(const Error& e);
nlohmann::json to_json(const DoctorReport& r);
nlohmann::json to_json(const StatsReport& s);
nlohmann::json to_json(const TopFrame& f);
nlohmann::json to_json(const TuneReport& r);
nlohmann::json to_json(const VersionInfo& v);

class Printer {
 public:
  Printer(Format format, std::ostream& out, std::ostream& err) : format_(format), out_(out), err_(err) {}
  Format format() const { return format_; }
  void set_format(Format f) { format_ = f; }
  // --quiet (connect, connect-all, discover): note() prints nothing; errors and the results on
  // the output stream are unchanged.
  void set_quiet(bool q) { quiet_ = q; }

  void print(const DiscoveryLog& log);
  void print(const Topology& t);
  void print(const std::vector<RdmaDevice>& devs);
  void print(const HostCheck& hc);
  void print(const ConnectOutcome& c);
  void print(const DisconnectOutcome& d);
  void print(const ConnectAllOutcome& c);
  void print(const DoctorReport& r);
  void print_json_document(const nlohmann::json& j) { json(j); }  // always JSON (doctor --dump-snapshot)
  void print(const StatsReport& s);
  // Text: 80 columns. JSON: one document on one line per refresh (JSON Lines). Flushed, since
  // `top` shows one after another.
  void print(const TopFrame& f);
  void print(const TuneReport& r);
  void print(const VersionInfo& v);
  void print_error(const Error& e);    // to the error stream
  void note(std::string_view text);    // notes, warnings, -v chatter: the error stream, unless quiet
  void raw(std::string_view text);     // already rendered (Prometheus exposition), as is

 private:
  void json(const nlohmann::json& j);
  // Every JSON document leaves through here: adds "version" (kJsonSchemaVersion). indent -1: one
  // line.
  static void emit(std::ostream& os, nlohmann::json j, int indent = 2);
  Format format_;
  std::ostream& out_;
  std::ostream& err_;
  bool quiet_ = false;
};

std::string human_size(uint64_t bytes);

}  // namespace rnvme
