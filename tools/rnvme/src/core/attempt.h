// The rnvme module's connect-attempt record: one kernel log line of key=value tokens per create
// or reconnect attempt (Documentation/rnvme.rst, "Connect-attempt records"), e.g.
//   rnvme: attempt v=1 id=7 kind=connect pid=812 ctrl=nvme1 addr=192.0.2.2:4420 result=fail
//          err=-5 stage=fabrics-connect cause=subsystem-not-found qid=0 nvme_status=0x4182 ...
// Read by key, never by the wording of a message.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnvme {

struct AttemptRecord {
  std::map<std::string, std::string> kv;  // every key=value of the line, as logged

  std::string get(const std::string& key) const;  // "" when absent
  bool failed() const { return get("result") == "fail"; }
  std::string stage() const { return get("stage"); }
  std::string cause() const { return get("cause"); }
};

// Parses one kernel message; nullopt unless it is a version-1 rnvme attempt record.
std::optional<AttemptRecord> parse_attempt_record(std::string_view text);

// The newest create ("kind=connect") record written for process `pid`, among `lines`.
std::optional<AttemptRecord> find_own_attempt(const std::vector<std::string>& lines, long pid);

}  // namespace rnvme
