// Turns a refused connect (errno + the kernel's messages for that attempt + checks of the host)
// into a likely cause and a fix. Pure: every fact is gathered by the caller.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/attempt.h"
#include "core/hostid.h"
#include "core/options.h"
#include "core/rdma.h"

namespace rnvme {

enum class FailureClass {
  kBadOption,        // nvme-fabrics rejected an option token or value
  kHostIdentity,     // hostnqn/hostid inconsistent
  kHostNotAllowed,   // target ACL does not admit this hostnqn
  kWrongNqn,         // target has no subsystem with that NQN
  kWrongPort,        // nothing listens on traddr:trsvcid (CM reject / refused)
  kUnreachable,      // no route / no answer from traddr
  kNoRdmaDevice,     // the source address is not on an RDMA device
  kNoRoceV2Gid,      // only RoCE v1 GIDs for the source address
  kPortDown,         // RDMA port not ACTIVE
  kModuleMissing,    // nvme-fabrics or the rdma transport not loaded
  kAlreadyConnected, // same association exists
  kTargetRejected,   // CM reject with an NVMe-RDMA status (resources, queue sizes)
  kConnectRejected,  // Fabrics Connect failed without a more specific message
  kPermission,
  kHostResources,    // the host's RDMA device could not create a queue
  kAuthentication,   // in-band authentication (DH-HMAC-CHAP) failed or is unavailable
  kUnknown,
};
std::string_view failure_class_name(FailureClass c);  // snake_case, stable (JSON "class")

struct EnvironmentFacts {
  bool fabrics_loaded = true;
  bool transport_loaded = true;     // rnvme or nvme_rdma
  bool devices_known = false;       // false: RDMA inventory could not be read
  std::vector<RdmaDevice> devices;
  std::string source_addr;          // host_traddr, or the address the route picks
  int route_errno = 0;              // from probing a route to traddr
  bool source_is_local = true;      // false: host_traddr is not configured on this host
  std::optional<HostCheck> host;    // identity actually used
};

struct ConnectFacts {
  ConnectOptions opts;
  int err = 0;                      // errno of the failed write (or open)
  std::vector<std::string> kernel;  // messages logged during the attempt
  std::optional<AttemptRecord> record;  // rnvme.ko's record of this very attempt, if any
  double seconds = 0;               // how long the attempt took
  EnvironmentFacts env;
};

struct Diagnosis {
  FailureClass cls = FailureClass::kUnknown;
  std::string cause;
  std::string fix;
  std::vector<std::string> evidence;
  std::map<std::string, std::string> record;  // the module record the diagnosis rests on
};

Diagnosis explain_connect_failure(const ConnectFacts& facts);

// Checks that do not need a failed attempt: used before connecting and by explain.
// Returns nullopt when the source address has an ACTIVE port with a RoCE v2 GID.
std::optional<Diagnosis> check_rdma_path(const EnvironmentFacts& env);

std::string cm_reject_reason_name(int status);       // IB CM REJ reason
std::string nvme_rdma_cm_status_name(int status);    // enum nvme_rdma_cm_status

}  // namespace rnvme
