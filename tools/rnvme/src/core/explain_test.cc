#include "core/explain.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <set>

namespace rnvme {
namespace {

constexpr const char* kSrc = "192.168.50.1";

RdmaDevice rxe(const std::string& ip, const std::string& state = "ACTIVE",
               const std::string& type = "RoCE v2") {
  RdmaDevice d;
  d.name = "rxe0";
  RdmaPort p;
  p.index = 1;
  p.state = state;
  p.link_layer = "Ethernet";
  p.netdev = "eth0";
  p.gids.push_back({1, *gid_for_address(ip), type, "eth0"});
  d.ports.push_back(p);
  return d;
}

// A healthy host: module loaded, rxe0 ACTIVE with a RoCE v2 GID for the source address.
ConnectFacts healthy(int err) {
  ConnectFacts f;
  f.opts.traddr = "192.168.50.10";
  f.opts.trsvcid = "4420";
  f.opts.nqn = "nqn.2024-01.io.rnvme:target1";
  f.err = err;
  f.env.devices_known = true;
  f.env.devices = {rxe(kSrc)};
  f.env.source_addr = kSrc;
  return f;
}

FailureClass cls(const ConnectFacts& f) { return explain_connect_failure(f).cls; }

TEST(Explain, WrongNqnFromHostConnectError) {
  auto f = healthy(EIO);
  f.kernel = {"nvme nvme0: Connect Invalid Data Parameter, subsysnqn \"nqn.2024-01.io.rnvme:nope\""};
  auto d = explain_connect_failure(f);
  EXPECT_EQ(d.cls, FailureClass::kWrongNqn);
  EXPECT_NE(d.cause.find("no subsystem 'nqn.2024-01.io.rnvme:target1'"), std::string::npos) << d.cause;
  EXPECT_NE(d.fix.find("rnvme discover --traddr=192.168.50.10 --trsvcid=4420"), std::string::npos);
  ASSERT_GE(d.evidence.size(), 2u);
  EXPECT_EQ(d.evidence[0], f.kernel[0]);
  EXPECT_NE(d.evidence.back().find("(5)"), std::string::npos);  // errno shown
}

TEST(Explain, WrongNqnFromTargetSideMessage) {
  auto f = healthy(EIO);
  f.kernel = {"nvmet: connect request for invalid subsystem nqn.2024-01.io.rnvme:nope!"};
  EXPECT_EQ(cls(f), FailureClass::kWrongNqn);
}

TEST(Explain, HostNotAllowed) {
  auto f = healthy(EIO);
  f.kernel = {"nvme nvme0: Connect for subsystem nqn.2024-01.io.rnvme:target1 is not allowed, hostnqn: nqn.x:y"};
  EXPECT_EQ(cls(f), FailureClass::kHostNotAllowed);
}

TEST(Explain, WrongPortFromCmRejectInvalidServiceId) {
  auto f = healthy(ECONNRESET);
  f.opts.trsvcid = "4999";
  f.kernel = {"nvme nvme0: Connect rejected: status 8 (invalid service ID).",
              "nvme nvme0: rdma connection establishment failed (-104)"};
  auto d = explain_connect_failure(f);
  EXPECT_EQ(d.cls, FailureClass::kWrongPort);
  EXPECT_NE(d.cause.find("192.168.50.10:4999"), std::string::npos) << d.cause;
  EXPECT_NE(d.cause.find("invalid service ID"), std::string::npos);
  EXPECT_NE(d.fix.find("--trsvcid"), std::string::npos);
}

TEST(Explain, WrongPortFromConnectionRefused) {
  EXPECT_EQ(cls(healthy(ECONNREFUSED)), FailureClass::kWrongPort);
}

TEST(Explain, WrongPortWhenPathHealthyButConnectionReset) {
  // No kernel lines (e.g. /dev/kmsg unreadable): the local checks pass, so blame the far end.
  EXPECT_EQ(cls(healthy(ECONNRESET)), FailureClass::kWrongPort);
}

TEST(Explain, CmRejectWithNvmeRdmaStatus) {
  auto f = healthy(ECONNRESET);
  f.kernel = {"nvme nvme0: Connect rejected: status 28 (consumer defined) nvme status 6 (resource not found)."};
  auto d = explain_connect_failure(f);
  EXPECT_EQ(d.cls, FailureClass::kTargetRejected);
  EXPECT_NE(d.cause.find("no resources on the target"), std::string::npos) << d.cause;
  EXPECT_NE(d.fix.find("--queue-size"), std::string::npos);
  f.kernel = {"nvme nvme0: Connect rejected: status 28 (consumer defined) nvme status 4 (invalid host SQ size)."};
  EXPECT_NE(explain_connect_failure(f).cause.find("invalid host SQ size"), std::string::npos);
}

// Kernel text is input: a number that does not fit an int is not a reject
// this tool knows, and nothing throws (it used to end as "internal error").
TEST(Explain, OversizedNumbersInKernelLinesDoNotThrow) {
  auto f = healthy(ECONNRESET);
  f.kernel = {"nvme nvme0: Connect rejected: status 99999999999 (consumer defined) nvme status 6 (x).",
              "nvme nvme0: Connect rejected: status 28 (consumer defined) nvme status 77777777777 (x).",
              "nvme nvme0: queue 0: the target rejected the connection: NVMe/RDMA status 0x1ffffffff (x)",
              "nvme nvme0: queue 0: connection rejected: invalid service ID (88888888888); is ...",
              "nvme nvme0: rdma_resolve_addr failed (-99999999999)."};
  FailureClass c = FailureClass::kUnknown;
  EXPECT_NO_THROW(c = cls(f));
  EXPECT_EQ(c, FailureClass::kWrongPort);  // as with no kernel lines at all
  // a well-formed line after the oversized ones still counts
  f.kernel.push_back("nvme nvme0: Connect rejected: status 8 (invalid service ID).");
  EXPECT_EQ(cls(f), FailureClass::kWrongPort);
  f.kernel = {"nvme nvme0: Connect rejected: status 99999999999 (x).",
              "nvme nvme0: queue 0: the target rejected the connection: NVMe/RDMA status 0x6 (target out of resources)"};
  EXPECT_EQ(cls(f), FailureClass::kTargetRejected);
}

TEST(Explain, UnreachableFromRoute) {
  auto f = healthy(ECONNRESET);
  f.env.source_addr.clear();
  f.env.route_errno = ENETUNREACH;
  auto d = explain_connect_failure(f);
  EXPECT_EQ(d.cls, FailureClass::kUnreachable);
  EXPECT_NE(d.cause.find("no route to 192.168.50.10"), std::string::npos);
  EXPECT_EQ(cls(healthy(EHOSTUNREACH)), FailureClass::kUnreachable);
}

TEST(Explain, NoRdmaDeviceForSourceAddress) {
  auto f = healthy(ENODEV);
  f.opts.host_traddr = "10.9.9.9";
  f.env.source_addr = "10.9.9.9";
  f.kernel = {"nvme nvme0: rdma_resolve_addr failed (-19)."};
  auto d = explain_connect_failure(f);
  EXPECT_EQ(d.cls, FailureClass::kNoRdmaDevice);
  EXPECT_NE(d.cause.find("10.9.9.9"), std::string::npos) << d.cause;
  EXPECT_NE(d.fix.find("rdma link add"), std::string::npos);
}

TEST(Explain, NoRdmaDeviceFromChecksWithoutKernelLines) {
  auto f = healthy(ECONNRESET);
  f.env.source_addr = "10.9.9.9";  // the route picks an address no RDMA device has
  auto d = explain_connect_failure(f);
  EXPECT_EQ(d.cls, FailureClass::kNoRdmaDevice);
  EXPECT_NE(d.cause.find("no RDMA device has a GID for the source address 10.9.9.9"), std::string::npos);

  auto none = healthy(ECONNRESET);
  none.env.devices.clear();
  EXPECT_EQ(explain_connect_failure(none).cause, "this host has no RDMA device");

  auto foreign = healthy(EADDRNOTAVAIL);
  foreign.env.source_addr = "10.7.7.7";
  foreign.env.source_is_local = false;
  auto fd = explain_connect_failure(foreign);
  EXPECT_EQ(fd.cls, FailureClass::kNoRdmaDevice);
  EXPECT_NE(fd.cause.find("not configured on this host"), std::string::npos);
}

TEST(Explain, PortDownAndRoceV1Only) {
  auto f = healthy(ECONNRESET);
  f.env.devices = {rxe(kSrc, "DOWN")};
  EXPECT_EQ(cls(f), FailureClass::kPortDown);
  f.env.devices = {rxe(kSrc, "ACTIVE", "IB/RoCE v1")};
  EXPECT_EQ(cls(f), FailureClass::kNoRoceV2Gid);
}

TEST(Explain, BadOptionFromKernel) {
  auto f = healthy(EINVAL);
  f.kernel = {"nvme_fabrics: invalid parameter 'hdr_digest'"};
  auto d = explain_connect_failure(f);
  EXPECT_EQ(d.cls, FailureClass::kBadOption);
  EXPECT_NE(d.cause.find("hdr_digest"), std::string::npos);
  f.kernel = {"nvme_fabrics: Invalid queue_size 9"};
  EXPECT_EQ(cls(f), FailureClass::kBadOption);
  f.kernel.clear();
  EXPECT_EQ(cls(f), FailureClass::kBadOption);  // bare EINVAL with healthy checks
}

TEST(Explain, HostIdentityFromKernelAndFromChecks) {
  auto f = healthy(EINVAL);
  f.kernel = {"nvme_fabrics: found same hostid 6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b but different hostnqn nqn.x:y"};
  EXPECT_EQ(cls(f), FailureClass::kHostIdentity);

  // an unusable hostid file is blamed ...
  auto g = healthy(EINVAL);
  g.env.host = check_host_identity({std::string("nqn.2014-08.org.nvmexpress:uuid:6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"),
                                    std::string("not-a-uuid")});
  auto d = explain_connect_failure(g);
  EXPECT_EQ(d.cls, FailureClass::kHostIdentity);
  EXPECT_NE(d.cause.find("/etc/nvme/hostid"), std::string::npos);
  // ... a hostid that is merely not the hostnqn's UUID is not (no kernel rule requires it)
  auto h = healthy(EINVAL);
  h.env.host = check_host_identity({std::string("nqn.2014-08.org.nvmexpress:uuid:6b3a2f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"),
                                    std::string("11111111-2222-4333-8444-555555555555")});
  EXPECT_NE(explain_connect_failure(h).cls, FailureClass::kHostIdentity);
}

// Linux 6.12 pairs a lone host NQN with its default host's ID and says EINVAL; when the kernel
// log is not readable the identity check still names the cause.
TEST(Explain, HalfAnIdentityIsBlamedForEinvalOnly) {
  auto f = healthy(EINVAL);
  f.env.host = check_host_identity({std::string("nqn.2024-01.io.rnvme:host-1"), std::nullopt});
  auto d = explain_connect_failure(f);
  EXPECT_EQ(d.cls, FailureClass::kHostIdentity);
  EXPECT_NE(d.cause.find("Linux 6.12"), std::string::npos) << d.cause;
  f.err = ECONNRESET;
  EXPECT_EQ(cls(f), FailureClass::kWrongPort);
}

TEST(Explain, MissingIdentityFilesAreNotBlamed) {
  auto f = healthy(ECONNRESET);
  f.env.host = check_host_identity({std::nullopt, std::nullopt});
  EXPECT_EQ(cls(f), FailureClass::kWrongPort);
}

TEST(Explain, ModulesAndPermissions) {
  auto f = healthy(ENOENT);
  EXPECT_EQ(cls(f), FailureClass::kModuleMissing);
  auto g = healthy(EINVAL);
  g.kernel = {"nvme_fabrics: no handler found for transport rdma."};
  EXPECT_EQ(cls(g), FailureClass::kModuleMissing);
  auto h = healthy(ECONNRESET);
  h.env.transport_loaded = false;
  EXPECT_EQ(cls(h), FailureClass::kModuleMissing);
  EXPECT_EQ(cls(healthy(EACCES)), FailureClass::kPermission);
}

TEST(Explain, AlreadyConnectedAndUnknown) {
  EXPECT_EQ(cls(healthy(EALREADY)), FailureClass::kAlreadyConnected);
  auto f = healthy(ENOMEM);
  auto d = explain_connect_failure(f);
  EXPECT_EQ(d.cls, FailureClass::kUnknown);
  EXPECT_NE(d.cause.find("(12)"), std::string::npos);
}

TEST(Explain, FiveRequiredClassesAreDistinct) {
  auto nqn = healthy(EIO);
  nqn.kernel = {"nvme nvme0: Connect Invalid Data Parameter, subsysnqn \"x\""};
  auto port = healthy(ECONNRESET);
  port.kernel = {"nvme nvme0: Connect rejected: status 8 (invalid service ID)."};
  auto dev = healthy(ENODEV);
  dev.env.source_addr = "10.9.9.9";
  auto opt = healthy(EINVAL);
  opt.kernel = {"nvme_fabrics: invalid parameter 'foo=%s'"};
  auto host = healthy(EINVAL);
  host.kernel = {"nvme_fabrics: found same hostnqn nqn.x:y but different hostid z"};
  std::set<FailureClass> seen = {cls(nqn), cls(port), cls(dev), cls(opt), cls(host)};
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_EQ(failure_class_name(cls(nqn)), "wrong_nqn");
  EXPECT_EQ(failure_class_name(cls(port)), "wrong_port");
  EXPECT_EQ(failure_class_name(cls(dev)), "no_rdma_device");
  EXPECT_EQ(failure_class_name(cls(opt)), "bad_option");
  EXPECT_EQ(failure_class_name(cls(host)), "host_identity");
}

// The same classes from rnvme.ko's own wording (drivers/rnvme/cm.c, queue.c, ctrl.c).
TEST(Explain, RnvmeModuleMessages) {
  auto port = healthy(ECONNRESET);
  port.kernel = {"nvme nvme0: queue 0: connection rejected: invalid service ID (8); is the target "
                 "listening on 192.0.2.2:4499?",
                 "nvme nvme0: queue 0: RDMA connection to 192.0.2.2:4499 failed (-104)"};
  EXPECT_EQ(cls(port), FailureClass::kWrongPort);

  auto rsc = healthy(ECONNRESET);
  rsc.kernel = {"nvme nvme0: queue 1: the target rejected the connection: NVMe/RDMA status 0x6 "
                "(target out of resources)"};
  auto d = explain_connect_failure(rsc);
  EXPECT_EQ(d.cls, FailureClass::kTargetRejected);
  EXPECT_NE(d.cause.find("status 0x6 (no resources on the target)"), std::string::npos) << d.cause;

  auto dev = healthy(ENODEV);
  dev.kernel = {"nvme nvme0: queue 0: address resolution of 192.0.2.2:4420 failed to start (-19)"};
  EXPECT_EQ(cls(dev), FailureClass::kNoRdmaDevice);

  // ADDR_ERROR: the local checks decide between "no RDMA device" and "unreachable".
  auto addr = healthy(ECONNRESET);
  addr.kernel = {"nvme nvme0: queue 0: cannot resolve 192.0.2.9:4420 to an RDMA device (-110): no "
                 "RDMA-capable route to it"};
  EXPECT_EQ(cls(addr), FailureClass::kUnreachable);
  addr.env.source_addr = "10.0.2.15";
  EXPECT_EQ(cls(addr), FailureClass::kNoRdmaDevice);

  auto dup = healthy(EALREADY);
  dup.kernel = {"rnvme: a controller for nqn.x:y at 192.0.2.2:4420 already exists (use "
                "duplicate_connect to add another)"};
  EXPECT_EQ(cls(dup), FailureClass::kAlreadyConnected);

  auto tos = healthy(EINVAL);
  tos.kernel = {"rnvme: tos=300 out of range 0..255"};
  EXPECT_EQ(cls(tos), FailureClass::kBadOption);
}

// The Connect status of rnvme.ko's record is shown with libnvme's text for it.
TEST(Explain, ConnectStatusFromTheRecordIsDescribed) {
  auto f = healthy(EIO);
  f.record = parse_attempt_record(
      "rnvme: attempt v=1 id=3 kind=connect pid=1 ctrl=nvme2 addr=192.168.50.10:4420 result=fail "
      "err=-5 stage=fabrics-connect cause=controller-busy qid=0 nvme_status=0x4181 nvme_result=0");
  ASSERT_TRUE(f.record);
  auto d = explain_connect_failure(f);
  EXPECT_EQ(d.cls, FailureClass::kTargetRejected);
  EXPECT_NE(d.cause.find("(Connect status 0x4181 (Controller Busy: The controller is already "
                         "associated with a host))"),
            std::string::npos)
      << d.cause;
}

TEST(Explain, StatusNames) {
  EXPECT_EQ(nvme_rdma_cm_status_name(1), "invalid private data length");
  EXPECT_EQ(nvme_rdma_cm_status_name(9), "invalid controller ID");
  EXPECT_EQ(nvme_rdma_cm_status_name(0x42), "unrecognized status 0x42");
  EXPECT_EQ(cm_reject_reason_name(8), "invalid service ID");
  EXPECT_EQ(cm_reject_reason_name(28), "consumer defined");
  EXPECT_EQ(cm_reject_reason_name(99), "reject reason 99");
}

}  // namespace
}  // namespace rnvme
