#include "core/explain.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <regex>

#include "core/number.h"
#include "core/nvme_status.h"

namespace rnvme {
namespace {

bool contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

const std::string* find_line(const std::vector<std::string>& lines,
                             std::initializer_list<std::string_view> needles) {
  for (const auto& l : lines)
    for (auto n : needles)
      if (contains(l, n)) return &l;
  return nullptr;
}

std::string errno_text(int err) {
  if (err == 0) return "no errno";
  return fmt::format("{} ({})", std::strerror(err), err);
}

std::string target(const ConnectOptions& o) {
  return fmt::format("{}:{}", o.traddr, o.trsvcid.empty() ? kDefaultRdmaPort : o.trsvcid);
}

Diagnosis make(FailureClass cls, std::string cause, std::string fix) {
  return Diagnosis{cls, std::move(cause), std::move(fix), {}, {}};
}

// CM rejects as the kernel logs them. In-tree rdma.c:
//   "Connect rejected: status 8 (invalid service ID)."
//   "Connect rejected: status 28 (consumer defined) nvme status 6 (resource not found)."
// rnvme.ko:
//   "queue 0: connection rejected: invalid service ID (8); is the target listening on ...?"
//   "queue 0: the target rejected the connection: NVMe/RDMA status 0x6 (target out of resources)"
struct CmReject {
  int cm = -1;      // IB CM reject reason, -1 if not logged
  int nvme = -1;    // NVMe/RDMA status from the consumer reject data, -1 if none
};

std::optional<CmReject> find_cm_reject(const std::vector<std::string>& lines) {
  static const std::regex intree(R"(Connect rejected: status (\d+)(?:[^.]*nvme status (\d+))?)");
  static const std::regex ours_nvme(R"(rejected the connection: NVMe/RDMA status (0x[0-9a-fA-F]+|\d+))");
  static const std::regex ours_cm(R"(connection rejected: [^;]*\((\d+)\))");
  for (const auto& l : lines) {
    std::smatch m;
    // a number too large for an int is not a reject this tool knows
    if (std::regex_search(l, m, intree)) {
      auto cm = parse_number<int>(m[1].str());
      auto nvme = m[2].matched ? parse_number<int>(m[2].str()) : std::optional<int>(-1);
      if (cm && nvme) return CmReject{*cm, *nvme};
      continue;
    }
    if (std::regex_search(l, m, ours_nvme)) {
      if (auto nvme = parse_number<int>(m[1].str())) return CmReject{28, *nvme};
      continue;
    }
    if (std::regex_search(l, m, ours_cm))
      if (auto cm = parse_number<int>(m[1].str())) return CmReject{*cm, -1};
  }
  return std::nullopt;
}

std::optional<Diagnosis> from_cm_reject(const ConnectFacts& f) {
  auto rej = find_cm_reject(f.kernel);
  if (!rej) return std::nullopt;
  if (rej->nvme >= 0) {
    std::string fix;
    switch (rej->nvme) {
      case 0x04:
      case 0x05:
        fix = "lower --queue-size (the target caps queue depth; 128 is safe for Linux targets)";
        break;
      case 0x06:
        fix = "lower --queue-size or --nr-io-queues, or free resources on the target "
              "(too many connections or queues)";
        break;
      case 0x09:
        fix = "the target does not know the controller ID of this association; reconnect, and "
              "check that both sides run compatible kernels";
        break;
      default:
        fix = "the host and target disagree on the NVMe/RDMA connection format; check both "
              "kernels and the target's port settings";
    }
    return make(FailureClass::kTargetRejected,
                fmt::format("the target rejected the RDMA connection with NVMe/RDMA status {:#x} "
                            "({})",
                            rej->nvme, nvme_rdma_cm_status_name(rej->nvme)),
                fix);
  }
  if (rej->cm == 8)
    return make(FailureClass::kWrongPort,
                fmt::format("nothing listens for NVMe/RDMA on {} (RDMA CM reject: {})",
                            target(f.opts), cm_reject_reason_name(rej->cm)),
                "check --trsvcid (the target's port, 4420 by default) and that the target port "
                "is enabled; 'rnvme discover' lists the ports a discovery controller knows");
  return make(FailureClass::kTargetRejected,
              fmt::format("the target's RDMA CM rejected the connection: {} ({})",
                          cm_reject_reason_name(rej->cm), rej->cm),
              "check the target's RDMA configuration and its kernel log");
}

std::optional<Diagnosis> from_kernel_lines(const ConnectFacts& f) {
  const auto& k = f.kernel;
  if (auto* l = find_line(k, {"no handler found for transport"}))
    return make(FailureClass::kModuleMissing,
                fmt::format("no '{}' transport is registered ({})", f.opts.transport, *l),
                "load the transport: 'modprobe rnvme' (or 'modprobe nvme-rdma')");
  if (find_line(k, {"found same hostid", "found same hostnqn"}))
    return make(FailureClass::kHostIdentity,
                "the kernel already pairs this host NQN with another host ID, or this host ID "
                "with another host NQN (its default host counts when only one of the two is "
                "given)",
                "use the pair the existing controllers use ('rnvme list' shows their hostnqn and "
                "hostid) and give both, or disconnect those controllers first");
  if (auto* l = find_line(k, {"invalid parameter", "unknown parameter", "missing parameter",
                               "Invalid ", "bad hostid", "failfast tmo", "out of range",
                               "not an IPv4/IPv6 address"})) {
    if (!contains(*l, "Connect Invalid"))
      return make(FailureClass::kBadOption,
                  fmt::format("nvme-fabrics refused an option: {}", *l),
                  "correct the option the kernel names (see rnvme(8) for ranges) or run with "
                  "--dry-run to see the option string");
  }
  if (find_line(k, {"is not allowed, hostnqn", "Connect Invalid Host", "not allowed to access",
                    "host not allowed"}))
    return make(FailureClass::kHostNotAllowed,
                fmt::format("the target does not allow host {} to access {}",
                            f.opts.hostnqn.empty() ? "(default hostnqn)" : f.opts.hostnqn,
                            f.opts.nqn),
                "add this hostnqn to the subsystem's allowed hosts on the target (or set "
                "attr_allow_any_host), or connect with the hostnqn the target expects");
  if (find_line(k, {"Invalid Data Parameter, subsysnqn", "invalid subsystem", "subsystem not found",
                    "Subsystem not found"}))
    return make(FailureClass::kWrongNqn,
                fmt::format("the target at {} has no subsystem '{}'", target(f.opts), f.opts.nqn),
                fmt::format("check --nqn; 'rnvme discover --traddr={} --trsvcid={}' lists the "
                            "subsystems this target exports",
                            f.opts.traddr, f.opts.trsvcid.empty() ? kDefaultRdmaPort : f.opts.trsvcid));
  if (auto d = from_cm_reject(f)) return d;
  // rdma.c: "rdma_resolve_addr failed (-19)."; rnvme: "address resolution of ... failed to start (-19)"
  static const std::regex resolve(R"((?:rdma_resolve_addr failed|failed to start) \((-?\d+)\))");
  for (const auto& l : k) {
    std::smatch m;
    if (std::regex_search(l, m, resolve)) {
      auto logged = parse_number<int>(m[1].str());
      if (!logged || *logged == std::numeric_limits<int>::min()) continue;
      int e = -*logged;
      if (e == ENODEV || e == EADDRNOTAVAIL || e == EINVAL)
        return make(FailureClass::kNoRdmaDevice,
                    fmt::format("no RDMA device owns the source address {} ({})",
                                f.env.source_addr.empty() ? "chosen by the route" : f.env.source_addr,
                                errno_text(e)),
                    "pass --host-traddr with an address of a netdev that has an RDMA device "
                    "(see 'rnvme rdma'), or create one: 'rnvme rdma link add rxe0 type rxe netdev "
                    "<netdev>'");
    }
  }
  if (find_line(k, {"already connected", "already exists"}))
    return make(FailureClass::kAlreadyConnected,
                "a controller for this target and NQN already exists",
                "use it ('rnvme list'), disconnect it first, or pass --duplicate-connect");
  // rnvme logs an address-resolution error as "cannot resolve <addr> to an RDMA device": either
  // no RDMA device serves the route or the neighbour did not answer; the local checks decide.
  if (find_line(k, {"to an RDMA device", "ADDR_ERROR"}))
    if (auto p = check_rdma_path(f.env)) return p;
  if (find_line(k, {"address resolution failed", "route resolution failed", "ADDR_ERROR",
                    "ROUTE_ERROR", "UNREACHABLE", "unreachable", "route error", "to an RDMA device"}))
    return make(FailureClass::kUnreachable,
                fmt::format("{} could not be reached over RDMA", target(f.opts)),
                "check the target address, the route ('ip route get <traddr>') and the link");
  return std::nullopt;
}

// rnvme.ko's own record of the attempt: stage and cause as tokens (Documentation/rnvme.rst).
// nullopt for a record that names no cause this function knows (the kernel lines decide then).
std::optional<Diagnosis> from_record(const ConnectFacts& f) {
  if (!f.record || !f.record->failed()) return std::nullopt;
  const AttemptRecord& r = *f.record;
  const std::string stage = r.stage(), cause = r.cause(), qid = r.get("qid");
  const std::string where = fmt::format("{}", target(f.opts));
  const std::string port = f.opts.trsvcid.empty() ? std::string(kDefaultRdmaPort) : f.opts.trsvcid;
  const std::string took = f.seconds > 0 ? fmt::format(" (gave up after {:.1f} s)", f.seconds) : "";
  auto d = [&](FailureClass c, std::string why, std::string fix) {
    Diagnosis out = make(c, std::move(why), std::move(fix));
    out.record = r.kv;
    return out;
  };
  if (stage == "options") {
    if (cause == "auth-not-in-kernel")
      return d(FailureClass::kAuthentication,
               "rnvme.ko refused the DH-HMAC-CHAP secret: this kernel's nvme-core is built "
               "without in-band authentication, and it would connect unauthenticated",
               "boot a kernel with CONFIG_NVME_HOST_AUTH (Debian 12: linux-image-6.12.*+deb12-amd64)");
    if (cause == "already-connected")
      return d(FailureClass::kAlreadyConnected, "a controller for this target and NQN already exists "
               "or is being created right now",
               "use it ('rnvme list'), disconnect it first, or pass --duplicate-connect");
    return d(FailureClass::kBadOption, fmt::format("rnvme.ko refused the options ({})", cause),
             "correct the option (see rnvme(8)); 'rnvme connect --dry-run ...' prints the string");
  }
  if (stage == "address") {
    if (cause == "no-rdma-device") {
      if (auto p = check_rdma_path(f.env)) {
        p->record = r.kv;
        return p;
      }
      return d(FailureClass::kNoRdmaDevice,
               fmt::format("the route to {} leaves through a netdev without an RDMA device", f.opts.traddr),
               "attach one ('rnvme rdma link add rxe0 type rxe netdev <netdev>' for Soft-RoCE) or "
               "pass --host-traddr with an address on an RDMA netdev (see 'rnvme rdma')");
    }
    if (cause == "no-neighbour")
      return d(FailureClass::kUnreachable,
               fmt::format("no host answered for {} on the local link: address resolution timed "
                           "out after 3 s{}", f.opts.traddr, took),
               fmt::format("check --traddr and that the target is up ('ip neigh show {}')", f.opts.traddr));
    if (cause == "no-route")
      return d(FailureClass::kUnreachable, fmt::format("no route to {}{}", f.opts.traddr, took),
               fmt::format("check --traddr and 'ip route get {}'", f.opts.traddr));
    if (cause == "port-down")
      return d(FailureClass::kPortDown, "the RDMA port of the controller's last path is down",
               "bring the link up ('ip link set <netdev> up') and check the cable/switch");
    if (cause == "queue-resources")
      return d(FailureClass::kHostResources,
               fmt::format("the host's RDMA device could not create the resources of queue {}", qid),
               "lower --queue-size or --nr-io-queues, or free RDMA resources on this host "
               "('rdma resource show')");
    return d(FailureClass::kUnreachable,
             fmt::format("address resolution of {} failed ({}, status {})", f.opts.traddr, cause,
                         r.get("cm_status")),
             fmt::format("check --traddr and 'ip route get {}'", f.opts.traddr));
  }
  if (stage == "route")
    return d(FailureClass::kUnreachable,
             fmt::format("the RDMA CM found no path to {} (route resolution, status {}){}",
                         f.opts.traddr, r.get("cm_status"), took),
             fmt::format("check 'ip route get {}' and the RDMA port's state ('rnvme rdma')", f.opts.traddr));
  if (stage == "cm") {
    if (cause == "no-listener")
      return d(FailureClass::kWrongPort,
               fmt::format("nothing listens for NVMe/RDMA on {} (the target's RDMA CM rejected "
                           "queue {}: invalid service ID)", where, qid),
               "check --trsvcid (the target's port, 4420 by default) and that the target port is "
               "enabled; 'rnvme discover' lists the ports a discovery controller knows");
    if (cause == "target-reject") {
      const std::string rej = r.get("rej");
      std::string fix = "check both sides' kernels and the target's port settings";
      if (rej == "invalid-hsqsize" || rej == "invalid-hrqsize")
        fix = "lower --queue-size (Linux targets take up to 128; 32 for the admin queue)";
      else if (rej == "no-resources")
        fix = "lower --queue-size or --nr-io-queues, or free resources on the target";
      else if (rej == "invalid-cntlid")
        fix = "reconnect; check that host and target run compatible kernels";
      return d(FailureClass::kTargetRejected,
               fmt::format("the target refused queue {}'s RDMA connection: NVMe/RDMA status {} ({})",
                           qid, r.get("rej_status"), rej),
               fix);
    }
    if (cause == "unreachable" || cause == "no-answer")
      return d(FailureClass::kUnreachable,
               fmt::format("{} did not answer queue {}'s RDMA connect request{}", where, qid, took),
               "check that the target is up and its RDMA port active, and --traddr/--trsvcid");
    if (cause == "interrupted") return std::nullopt;
    return d(FailureClass::kTargetRejected,
             fmt::format("queue {}'s RDMA connection to {} failed ({}, status {})", qid, where, cause,
                         r.get("cm_status")),
             "check the target's RDMA configuration and its kernel log");
  }
  if (stage == "fabrics-connect") {
    if (cause == "subsystem-not-found")
      return d(FailureClass::kWrongNqn,
               fmt::format("the target at {} has no subsystem '{}'", where, f.opts.nqn),
               fmt::format("check --nqn; 'rnvme discover --traddr={} --trsvcid={}' lists the "
                           "subsystems this target exports", f.opts.traddr, port));
    if (cause == "host-not-allowed" || cause == "invalid-hostnqn")
      return d(FailureClass::kHostNotAllowed,
               fmt::format("the target does not allow host {} to access {}",
                           f.opts.hostnqn.empty() ? "(default hostnqn)" : f.opts.hostnqn, f.opts.nqn),
               "add this host NQN to the subsystem's allowed hosts on the target (or set "
               "attr_allow_any_host), or connect with the host NQN the target expects");
    if (cause == "invalid-hostid")
      return d(FailureClass::kHostIdentity, "the target refused the host ID",
               "check /etc/nvme/hostid ('rnvme hostnqn show')");
    if (cause == "controller-busy")
      return d(FailureClass::kTargetRejected,
               fmt::format("the controller at {} is busy (Connect status {})", where,
                           nvme_status_text(r.get("nvme_status"))),
               "retry later; the target has no free controller for this host");
    if (cause == "no-response")
      return d(FailureClass::kUnreachable,
               fmt::format("{} accepted the RDMA connection but did not answer queue {}'s Fabrics "
                           "Connect command{}", where, qid, took),
               "check the target's kernel log; an overloaded or hung target does this");
    return d(FailureClass::kConnectRejected,
             fmt::format("the target refused queue {}'s Connect command: {} (status {}, result {})",
                         qid, cause, nvme_status_text(r.get("nvme_status")), r.get("nvme_result")),
             "check --nqn against 'rnvme discover' and the target's allowed hosts");
  }
  if (stage == "authentication") {
    const std::string host = f.opts.hostnqn.empty() ? "this host" : f.opts.hostnqn;
    auto a = [&](std::string why, std::string fix) {
      return d(FailureClass::kAuthentication, std::move(why), std::move(fix));
    };
    if (cause == "no-host-key")
      return a(fmt::format("the target at {} requires in-band authentication (DH-HMAC-CHAP) and "
                           "no host key was given", where),
               "pass --dhchap-secret=DHHC-1:... with the key the target has for this host NQN "
               "(nvmet: hosts/<hostnqn>/dhchap_key)");
    if (cause == "host-key-rejected" || cause == "closed-after-reply")
      return a(fmt::format("the target refused {}'s key (--dhchap-secret): it does not match "
                           "the key the target has for this host NQN{}", host,
                           cause == "host-key-rejected"
                               ? ""
                               : " (the target closed the connection right after the host's "
                                 "response, as Linux nvmet does when it refuses the key)"),
               "give the host the key configured on the target for this host NQN, or set that "
               "key on the target (nvmet: hosts/<hostnqn>/dhchap_key)");
    if (cause == "ctrl-key-rejected")
      return a(fmt::format("this host refused the target's answer: the controller key "
                           "(--dhchap-ctrl-secret) does not match the one the target at {} uses",
                           where),
               "give the host the controller key configured on the target (nvmet: "
               "hosts/<hostnqn>/dhchap_ctrl_key), or drop --dhchap-ctrl-secret for one-way "
               "authentication");
    if (cause == "ctrl-not-authenticated")
      return a(fmt::format("--dhchap-ctrl-secret asks the target at {} to authenticate itself, "
                           "and it did not (no authentication requested, or no controller "
                           "response)", where),
               "configure the controller key on the target (nvmet: hosts/<hostnqn>/dhchap_key "
               "and dhchap_ctrl_key), or drop --dhchap-ctrl-secret");
    if (cause == "negotiation-refused")
      return a(fmt::format("the target at {} refused the authentication negotiation (no "
                           "common hash or DH group)", where),
               "check the target's dhchap_hash and dhchap_dhgroup for this host");
    if (cause == "not-in-kernel")
      return a(fmt::format("the target at {} requires in-band authentication and this kernel's "
                           "nvme-core is built without it", where),
               "boot a kernel with CONFIG_NVME_HOST_AUTH (Debian 12: linux-image-6.12.*+deb12-amd64)");
    return a(fmt::format("in-band authentication with the target at {} failed on queue {} ({})",
                         where, qid, cause),
             "check both sides' keys, the target's dhchap_hash/dhchap_dhgroup and its kernel log");
  }
  if (stage == "grant")
    return d(FailureClass::kTargetRejected,
             fmt::format("the target's queue grant cannot be used ({})", cause),
             "check the target's queue settings (number and size of I/O queues)");
  if (stage == "controller")
    return d(FailureClass::kTargetRejected,
             fmt::format("the target's controller lacks what NVMe/RDMA needs ({})", cause),
             "use a target that supports keyed SGLs and in-capsule data at offset 0");
  return std::nullopt;
}

}  // namespace

std::string_view failure_class_name(FailureClass c) {
  switch (c) {
    case FailureClass::kBadOption: return "bad_option";
    case FailureClass::kHostIdentity: return "host_identity";
    case FailureClass::kHostNotAllowed: return "host_not_allowed";
    case FailureClass::kWrongNqn: return "wrong_nqn";
    case FailureClass::kWrongPort: return "wrong_port";
    case FailureClass::kUnreachable: return "unreachable";
    case FailureClass::kNoRdmaDevice: return "no_rdma_device";
    case FailureClass::kNoRoceV2Gid: return "no_roce_v2_gid";
    case FailureClass::kPortDown: return "port_down";
    case FailureClass::kModuleMissing: return "module_missing";
    case FailureClass::kAlreadyConnected: return "already_connected";
    case FailureClass::kTargetRejected: return "target_rejected";
    case FailureClass::kConnectRejected: return "connect_rejected";
    case FailureClass::kPermission: return "permission";
    case FailureClass::kHostResources: return "host_resources";
    case FailureClass::kAuthentication: return "authentication";
    case FailureClass::kUnknown: return "unknown";
  }
  return "unknown";
}

std::string cm_reject_reason_name(int s) {
  switch (s) {
    case 1: return "no QP";
    case 2: return "no EEC";
    case 3: return "no resources";
    case 4: return "timeout";
    case 5: return "unsupported request";
    case 6: return "invalid comm ID";
    case 7: return "invalid comm instance";
    case 8: return "invalid service ID";
    case 9: return "invalid transport type";
    case 10: return "stale connection";
    case 12: return "invalid GID";
    case 26: return "invalid MTU";
    case 27: return "insufficient responder resources";
    case 28: return "consumer defined";
    case 29: return "invalid RNR retry";
    case 30: return "duplicate local comm ID";
    case 31: return "invalid class version";
    case 32: return "invalid flow label";
    default: return fmt::format("reject reason {}", s);
  }
}

std::string nvme_rdma_cm_status_name(int s) {
  switch (s) {
    case 0x01: return "invalid private data length";
    case 0x02: return "invalid record format";
    case 0x03: return "invalid queue ID";
    case 0x04: return "invalid host SQ size";
    case 0x05: return "invalid host RQ size";
    case 0x06: return "no resources on the target";
    case 0x07: return "invalid IRD";
    case 0x08: return "invalid ORD";
    case 0x09: return "invalid controller ID";
    default: return fmt::format("unrecognized status {:#x}", s);
  }
}

std::optional<Diagnosis> check_rdma_path(const EnvironmentFacts& env) {
  if (!env.devices_known) return std::nullopt;
  if (env.devices.empty())
    return make(FailureClass::kNoRdmaDevice, "this host has no RDMA device",
                "load the NIC's RDMA driver, or for a lab create a Soft-RoCE device: "
                "'rnvme rdma link add rxe0 type rxe netdev <netdev>'");
  if (!env.source_is_local)
    return make(FailureClass::kNoRdmaDevice,
                fmt::format("the source address {} is not configured on this host", env.source_addr),
                "pass --host-traddr with an address of a local RDMA-capable netdev (see 'rnvme rdma')");
  if (env.source_addr.empty()) return std::nullopt;
  auto m = find_gid(env.devices, env.source_addr);
  if (!m)
    return make(FailureClass::kNoRdmaDevice,
                fmt::format("no RDMA device has a GID for the source address {}; its netdev has no "
                            "RDMA device (or the address is on another interface)",
                            env.source_addr),
                "use --host-traddr with an address on an RDMA netdev (see 'rnvme rdma'), or attach "
                "one: 'rnvme rdma link add rxe0 type rxe netdev <netdev of that address>'");
  if (m->port->state != "ACTIVE")
    return make(FailureClass::kPortDown,
                fmt::format("RDMA port {}/{} for {} is {}, not ACTIVE", m->device->name,
                            m->port->index, env.source_addr, m->port->state),
                fmt::format("bring the link up ('ip link set {} up') and check the cable/switch",
                            m->port->netdev.empty() ? "<netdev>" : m->port->netdev));
  if (m->gid->type != "RoCE v2" && m->port->link_layer == "Ethernet")
    return make(FailureClass::kNoRoceV2Gid,
                fmt::format("{} has only a RoCE v1 GID on {}/{}; NVMe/RDMA over routed Ethernet "
                            "needs RoCE v2",
                            env.source_addr, m->device->name, m->port->index),
                "enable RoCE v2 on the NIC (e.g. 'cma_roce_mode -d <dev> -p 1 -m 2')");
  return std::nullopt;
}

Diagnosis explain_connect_failure(const ConnectFacts& f) {
  Diagnosis d;
  auto done = [&](Diagnosis r) {
    r.evidence.insert(r.evidence.begin(), f.kernel.begin(), f.kernel.end());
    if (f.err) r.evidence.push_back(fmt::format("write to /dev/nvme-fabrics failed: {}", errno_text(f.err)));
    return r;
  };
  if (f.err == EACCES || f.err == EPERM)
    return done(make(FailureClass::kPermission, "creating NVMe controllers needs root (CAP_SYS_ADMIN)",
                     "run rnvme as root"));
  if (!f.env.fabrics_loaded || f.err == ENOENT || f.err == ENXIO)
    return done(make(FailureClass::kModuleMissing,
                     "/dev/nvme-fabrics is missing: the nvme-fabrics module is not loaded",
                     "'modprobe nvme-fabrics' and load the RDMA transport ('modprobe rnvme')"));
  if (auto r = from_record(f)) {
    r->evidence.push_back(fmt::format("rnvme.ko attempt {}: stage={} cause={}", f.record->get("id"),
                                      f.record->stage(), f.record->cause()));
    return done(std::move(*r));
  }
  if (auto k = from_kernel_lines(f)) return done(std::move(*k));

  switch (f.err) {
    case EALREADY:
      return done(make(FailureClass::kAlreadyConnected,
                       "a controller for this target and NQN already exists",
                       "use it ('rnvme list'), disconnect it first, or pass --duplicate-connect"));
    case ECONNREFUSED:
      return done(make(FailureClass::kWrongPort,
                       fmt::format("{} refused the connection: nothing listens on that port",
                                   target(f.opts)),
                       "check --trsvcid (4420 by default) and that the target port is enabled"));
    case ENETUNREACH:
    case EHOSTUNREACH:
      return done(make(FailureClass::kUnreachable,
                       fmt::format("no route to {}", f.opts.traddr),
                       "check the target address and 'ip route get <traddr>'"));
    case ENODEV:
    case EADDRNOTAVAIL:
      if (auto p = check_rdma_path(f.env)) return done(std::move(*p));
      return done(make(FailureClass::kNoRdmaDevice,
                       "the RDMA CM found no RDMA device for the source address",
                       "pass --host-traddr with an address on an RDMA netdev (see 'rnvme rdma')"));
    default:
      break;
  }

  if (!f.env.transport_loaded)
    return done(make(FailureClass::kModuleMissing, "the RDMA transport module is not loaded",
                     "'modprobe rnvme' (or 'modprobe nvme-rdma')"));
  // Missing identity files are not a cause: the kernel then uses its default host.  Half an
  // identity is, for an EINVAL: Linux 6.12 completes it from the default host and refuses it.
  if (f.env.host)
    for (const auto& p : f.env.host->problems)
      if ((p.fatal && p.kind != HostProblem::kMissing) ||
          (p.kind == HostProblem::kUnpaired && f.err == EINVAL))
        return done(make(FailureClass::kHostIdentity, fmt::format("{}: {}", p.source, p.problem),
                         p.fix));
  if (f.env.route_errno)
    return done(make(FailureClass::kUnreachable,
                     fmt::format("no route to {}: {}", f.opts.traddr, errno_text(f.env.route_errno)),
                     "check the target address and 'ip route get <traddr>'"));
  if (auto p = check_rdma_path(f.env)) return done(std::move(*p));

  switch (f.err) {
    case EINVAL:
      return done(make(FailureClass::kBadOption,
                       "nvme-fabrics rejected the option string without saying which option",
                       "check the values against rnvme(8); 'rnvme connect --dry-run ...' prints "
                       "the string; the kernel log may name the option"));
    case EIO:
      return done(make(FailureClass::kConnectRejected,
                       fmt::format("the target at {} refused the NVMe Connect command",
                                   target(f.opts)),
                       "check --nqn against 'rnvme discover' and that the target allows this "
                       "hostnqn ('rnvme hostnqn show')"));
    case ECONNRESET:
    case ETIMEDOUT:
      return done(make(FailureClass::kWrongPort,
                       fmt::format("no RDMA connection to {}: the target did not accept it (wrong "
                                   "port, target not listening) or did not answer",
                                   target(f.opts)),
                       "check --trsvcid and that the target port is enabled; the local RDMA path "
                       "looks fine"));
    default:
      return done(make(FailureClass::kUnknown,
                       fmt::format("the kernel refused the connection: {}", errno_text(f.err)),
                       "see the kernel messages above; run with -v for the option string"));
  }
}

}  // namespace rnvme
