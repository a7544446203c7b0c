#include "core/discovery.h"

#include <fmt/format.h>
#include <libnvme.h>

#include <string_view>

namespace rnvme {
namespace {

uint64_t le(std::span<const uint8_t> b, size_t off, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) v |= static_cast<uint64_t>(b[off + i]) << (8 * i);
  return v;
}

// Address fields are ASCII, padded with spaces (spec) or NULs (some targets).
std::string field(std::span<const uint8_t> b, size_t off, size_t n) {
  std::string s(reinterpret_cast<const char*>(b.data() + off), n);
  auto nul = s.find('\0');
  if (nul != std::string::npos) s.resize(nul);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string unrecognized(unsigned v) { return fmt::format("unrecognized({})", v); }

// libnvme's name for a field value; where it has none the value stays in the text.
std::string lib_name(const char* name, unsigned v) {
  if (!name || std::string_view(name) == "unrecognized") return unrecognized(v);
  return name;
}

}  // namespace

Result<DiscoveryHeader> decode_discovery_header(std::span<const uint8_t> b) {
  if (b.size() < kDiscoveryHeaderSize)
    return make_error(ErrorCode::kFailure,
                      fmt::format("discovery log too short: {} bytes, header needs {}", b.size(),
                                  kDiscoveryHeaderSize));
  return DiscoveryHeader{le(b, 0, 8), le(b, 8, 8)};
}

Result<DiscoveryLog> decode_discovery_log(std::span<const uint8_t> b) {
  auto hdr = decode_discovery_header(b);
  if (!hdr) return hdr.error();
  DiscoveryLog log;
  log.genctr = hdr->genctr;
  log.numrec = hdr->numrec;
  log.recfmt = static_cast<uint16_t>(le(b, 16, 2));
  const size_t have = (b.size() - kDiscoveryHeaderSize) / kDiscoveryEntrySize;
  if (log.numrec > have)
    return make_error(ErrorCode::kFailure,
                      fmt::format("discovery log claims {} records but holds {}", log.numrec, have),
                      "the log changed while it was read, or the target returned a short page",
                      "run the command again");
  for (size_t i = 0; i < log.numrec; i++) {
    auto e = b.subspan(kDiscoveryHeaderSize + i * kDiscoveryEntrySize, kDiscoveryEntrySize);
    DiscoveryEntry d;
    d.trtype = e[0];
    d.adrfam = e[1];
    d.subtype = e[2];
    d.treq = e[3];
    d.portid = static_cast<uint16_t>(le(e, 4, 2));
    d.cntlid = static_cast<uint16_t>(le(e, 6, 2));
    d.asqsz = static_cast<uint16_t>(le(e, 8, 2));
    d.eflags = static_cast<uint16_t>(le(e, 10, 2));
    d.trsvcid = field(e, 32, 32);
    d.subnqn = field(e, 256, 256);
    d.traddr = field(e, 512, 256);
    if (d.trtype == kTrtypeRdma) {
      d.rdma_qptype = e[768];
      d.rdma_prtype = e[769];
      d.rdma_cms = e[770];
      d.rdma_pkey = static_cast<uint16_t>(le(e, 776, 2));
    }
    // A record without a subsystem NQN or an address cannot be connected to: the target sent
    // fewer bytes than its numrec claims (the host cannot see how many an RDMA WRITE carried),
    // or a broken record. Refuse the page rather than show or connect to a blank entry.
    if (d.subnqn.empty() || d.traddr.empty())
      return make_error(ErrorCode::kFailure,
                        fmt::format("discovery log record {} of {} has no {}", i, log.numrec,
                                    d.subnqn.empty() ? "subsystem NQN" : "transport address"),
                        "the target returned a short or malformed discovery log page",
                        "check the target's discovery configuration, then run the command again");
    log.entries.push_back(std::move(d));
  }
  return log;
}

// The names are libnvme's (nvmf_*_str) except where rnvme's documented tokens differ.
std::string trtype_name(uint8_t v) { return lib_name(nvmf_trtype_str(v), v); }
std::string adrfam_name(uint8_t v) {
  // libnvme 1.3 calls 0 "pci" (reserved in a discovery log entry) and has no name for 254.
  if (v == NVMF_ADDR_FAMILY_PCI) return unrecognized(v);
  if (v == NVMF_ADDR_FAMILY_LOOP) return "loop";
  return lib_name(nvmf_adrfam_str(v), v);
}
std::string subtype_name(uint8_t v) {
  // rnvme's token; libnvme says "discovery subsystem referral".
  if (v == NVME_NQN_DISC) return "referral";
  return lib_name(nvmf_subtype_str(v), v);
}
std::string treq_name(uint8_t v) {
  // libnvme names only whole values 0, 1, 2 and 4: bits 1:0 (secure channel) and bit 2 (SQ
  // flow control disable supported) are named apart so that 6 is not "unrecognized".
  std::string s = lib_name(nvmf_treq_str(v & 3), v & 3u);
  if (v & NVMF_TREQ_DISABLE_SQFLOW) s += ", sq flow control disable supported";
  return s;
}
std::string rdma_qptype_name(uint8_t v) { return lib_name(nvmf_qptype_str(v), v); }
std::string rdma_prtype_name(uint8_t v) { return lib_name(nvmf_prtype_str(v), v); }
std::string rdma_cms_name(uint8_t v) { return lib_name(nvmf_cms_str(v), v); }

static_assert(kTreqDisableSqflow == NVMF_TREQ_DISABLE_SQFLOW);

ConnectOptions entry_connect_options(const ConnectOptions& tmpl, const DiscoveryEntry& e) {
  ConnectOptions o = tmpl;
  o.traddr = e.traddr;
  o.trsvcid = e.trsvcid;
  o.nqn = e.subnqn;
  if (e.treq & kTreqDisableSqflow) o.disable_sqflow = true;
  return o;
}

}  // namespace rnvme
