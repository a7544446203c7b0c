#include "core/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "core/hostid.h"

namespace rnvme {
namespace {

std::string* f_transport(ConnectOptions& o) { return &o.transport; }
std::string* f_traddr(ConnectOptions& o) { return &o.traddr; }
std::string* f_trsvcid(ConnectOptions& o) { return &o.trsvcid; }
std::string* f_nqn(ConnectOptions& o) { return &o.nqn; }
std::string* f_hostnqn(ConnectOptions& o) { return &o.hostnqn; }
std::string* f_hostid(ConnectOptions& o) { return &o.hostid; }
std::string* f_host_traddr(ConnectOptions& o) { return &o.host_traddr; }
std::string* f_dhchap(ConnectOptions& o) { return &o.dhchap_secret; }
std::string* f_dhchap_ctrl(ConnectOptions& o) { return &o.dhchap_ctrl_secret; }
std::optional<int>* f_queue_size(ConnectOptions& o) { return &o.queue_size; }
std::optional<int>* f_nr_io(ConnectOptions& o) { return &o.nr_io_queues; }
std::optional<int>* f_nr_write(ConnectOptions& o) { return &o.nr_write_queues; }
std::optional<int>* f_nr_poll(ConnectOptions& o) { return &o.nr_poll_queues; }
std::optional<int>* f_reconnect(ConnectOptions& o) { return &o.reconnect_delay; }
std::optional<int>* f_ctrl_loss(ConnectOptions& o) { return &o.ctrl_loss_tmo; }
std::optional<int>* f_fast_io(ConnectOptions& o) { return &o.fast_io_fail_tmo; }
std::optional<int>* f_kato(ConnectOptions& o) { return &o.keep_alive_tmo; }
std::optional<int>* f_tos(ConnectOptions& o) { return &o.tos; }
bool* f_dup(ConnectOptions& o) { return &o.duplicate_connect; }
bool* f_sqflow(ConnectOptions& o) { return &o.disable_sqflow; }

using K = OptionKind;
using D = DefaultValues;

Status bad(std::string_view name, std::string_view value, std::string_view why) {
  return make_error(ErrorCode::kUsage, fmt::format("invalid value '{}' for --{}", value, name),
                    std::string(why), fmt::format("pass a valid --{} (see rnvme(8))", name));
}

Status check_range(std::string_view name, const std::optional<int>& v, long lo, long hi,
                   std::string_view meaning) {
  if (!v || (*v >= lo && *v <= hi)) return Ok{};
  return bad(name, std::to_string(*v), fmt::format("--{} must be {}..{} ({})", name, lo, hi, meaning));
}

}  // namespace

const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> table = {
      {"transport", 't', K::kString, "rdma, or the transport_name rnvme.ko registered", f_transport, nullptr, nullptr},
      {"traddr", 'a', K::kString, "target address (IPv4 or IPv6)", f_traddr, nullptr, nullptr},
      {"trsvcid", 's', K::kString, "target port (default 4420)", f_trsvcid, nullptr, nullptr},
      {"nqn", 'n', K::kString, "subsystem NQN", f_nqn, nullptr, nullptr},
      {"hostnqn", 'q', K::kString, "host NQN (default /etc/nvme/hostnqn)", f_hostnqn, nullptr, nullptr},
      {"hostid", 'I', K::kString, "host UUID (default /etc/nvme/hostid)", f_hostid, nullptr, nullptr},
      {"host-traddr", 'w', K::kString, "source address; selects the local RDMA port", f_host_traddr,
       nullptr, nullptr},
      {"queue-size", 'Q', K::kInt, "I/O queue depth, 16..1024 (0, -1: the default)", nullptr,
       f_queue_size, nullptr, {}, D::kZeroOrMinusOne},
      {"nr-io-queues", 'i', K::kInt, "number of I/O queues (0, -1: the default)", nullptr, f_nr_io,
       nullptr, {}, D::kZeroOrMinusOne},
      {"nr-write-queues", 'W', K::kInt, "additional write queues (0, -1: none)", nullptr,
       f_nr_write, nullptr, {}, D::kZeroOrMinusOne},
      {"nr-poll-queues", 'P', K::kInt, "additional poll queues (0, -1: none)", nullptr, f_nr_poll,
       nullptr, {}, D::kZeroOrMinusOne},
      {"reconnect-delay", 'c', K::kInt, "seconds between reconnect attempts (0, -1: the default)",
       nullptr, f_reconnect, nullptr, {}, D::kZeroOrMinusOne},
      {"ctrl-loss-tmo", 'l', K::kInt, "seconds before giving up on a lost controller (-1: never)",
       nullptr, f_ctrl_loss, nullptr},
      {"fast-io-fail-tmo", 'F', K::kInt, "seconds before failing I/O while reconnecting (-1: off)",
       nullptr, f_fast_io, nullptr, "fast_io_fail_tmo"},
      {"keep-alive-tmo", 'k', K::kInt, "keep-alive timeout in seconds (0, -1: the default)",
       nullptr, f_kato, nullptr, {}, D::kZeroOrMinusOne},
      {"tos", 'T', K::kInt, "type of service, 0..255 (-1: the default)", nullptr, f_tos, nullptr,
       {}, D::kMinusOne},
      {"duplicate-connect", 'D', K::kFlag, "allow a second connection to the same target", nullptr,
       nullptr, f_dup},
      {"disable-sqflow", 'd', K::kFlag, "disable SQ flow control", nullptr, nullptr, f_sqflow},
      // nvme-cli's options for other transports: accepted, reported as ignored
      {"host-iface", 'f', K::kNotRdma,
       "nvme-cli: network interface for TCP; RDMA picks its port by --host-traddr", nullptr,
       nullptr, nullptr},
      {"hdr-digest", 'g', K::kNotRdmaFlag, "nvme-cli: TCP header digest", nullptr, nullptr, nullptr},
      {"data-digest", 'G', K::kNotRdmaFlag, "nvme-cli: TCP data digest", nullptr, nullptr, nullptr},
      {"tls", 0, K::kNotRdmaFlag, "nvme-cli: TLS for TCP", nullptr, nullptr, nullptr},
      {"concat", 0, K::kNotRdmaFlag, "nvme-cli: secure channel concatenation (TCP)", nullptr,
       nullptr, nullptr},
      {"keyring", 0, K::kNotRdma, "nvme-cli: keyring of TLS keys (TCP)", nullptr, nullptr, nullptr},
      {"tls-key", 0, K::kNotRdma, "nvme-cli: TLS key (TCP)", nullptr, nullptr, nullptr},
      // in-band authentication (needs a kernel with CONFIG_NVME_HOST_AUTH, e.g. Debian's 6.12)
      {"dhchap-secret", 'S', K::kString,
       "DH-HMAC-CHAP host key (DHHC-1:...): the target authenticates this host", f_dhchap, nullptr,
       nullptr},
      {"dhchap-ctrl-secret", 'C', K::kString,
       "DH-HMAC-CHAP controller key: this host authenticates the target too", f_dhchap_ctrl,
       nullptr, nullptr},
  };
  return table;
}

const OptionSpec* find_option(std::string_view name) {
  for (const auto& spec : option_table()) {
    if (spec.long_name == name || (!spec.alias.empty() && spec.alias == name)) return &spec;
    if (name.size() == 1 && spec.short_name == name[0]) return &spec;
  }
  // nvme-cli spells these with an underscore in config.json; accept both on input.
  std::string dashed(name);
  for (auto& c : dashed)
    if (c == '_') c = '-';
  if (dashed != name) return find_option(dashed);
  return nullptr;
}

Status set_option(ConnectOptions& opts, const OptionSpec& spec, std::string_view value) {
  switch (spec.kind) {
    case K::kString:
      if (spec.str == f_dhchap || spec.str == f_dhchap_ctrl)
        if (auto why = dhchap_secret_problem(value))  // the value is a secret: not echoed
          return make_error(ErrorCode::kUsage, fmt::format("invalid --{}: {}", spec.long_name, *why),
                            "nvme-core takes a key of the form DHHC-1:<hmac 00-03>:<base64 of a "
                            "32/48/64-byte key and its CRC-32>:",
                            "generate one with 'nvme gen-dhchap-key --nqn=<host NQN>' and give the "
                            "same key to the target");
      *spec.str(opts) = std::string(value);
      return Ok{};
    case K::kInt: {
      int v = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || p != value.data() + value.size() || value.empty())
        return bad(spec.long_name, value, "expected an integer");
      // nvme-cli's "not given": the option stays unset (or is unset again), the kernel's default
      if ((v == -1 && spec.defaults != D::kNone) || (v == 0 && spec.defaults == D::kZeroOrMinusOne)) {
        spec.num(opts)->reset();
        return Ok{};
      }
      *spec.num(opts) = v;
      return Ok{};
    }
    case K::kFlag:
      if (value.empty() || value == "true" || value == "1") {
        *spec.flag(opts) = true;
      } else if (value == "false" || value == "0") {
        *spec.flag(opts) = false;
      } else {
        return bad(spec.long_name, value, "expected true or false");
      }
      return Ok{};
    case K::kNotRdma:
    case K::kNotRdmaFlag:
      // config.json writes unset ones as false or ""
      if (value == "false" || value == "0" || (spec.kind == K::kNotRdma && value.empty()))
        return Ok{};
      opts.ignored.push_back(fmt::format("--{} does not apply to rdma ({}): ignored", spec.long_name,
                                         spec.help.substr(spec.help.find(':') + 2)));
      return Ok{};
  }
  return Ok{};
}

bool is_rdma_transport_name(std::string_view t) {
  // rnvme.ko may register under another name (module parameter transport_name) to run beside
  // the in-tree nvme-rdma; it refuses the names of the other in-tree transports.
  if (t.empty() || t.size() > 16) return false;
  for (auto other : {"tcp", "fc", "loop", "pci", "pcie"})
    if (t == other) return false;
  return std::all_of(t.begin(), t.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_';
  });
}

Status validate(const ConnectOptions& o) {
  if (!is_rdma_transport_name(o.transport))
    return bad("transport", o.transport,
               "rnvme drives the RDMA transport only ('rdma', or the transport_name rnvme.ko was "
               "loaded with); use nvme-cli for tcp, fc or loop");
  if (o.traddr.empty())
    return make_error(ErrorCode::kUsage, "missing --traddr", "the RDMA transport needs a target address",
                      "pass --traddr=<target IP>");
  if (!is_ip_address(o.traddr))
    return bad("traddr", o.traddr, "the RDMA transport needs a numeric IPv4 or IPv6 address");
  if (!o.host_traddr.empty() && !is_ip_address(o.host_traddr))
    return bad("host-traddr", o.host_traddr, "--host-traddr must be a local IPv4 or IPv6 address");
  if (!o.trsvcid.empty()) {
    int port = 0;
    auto [p, ec] = std::from_chars(o.trsvcid.data(), o.trsvcid.data() + o.trsvcid.size(), port);
    if (ec != std::errc() || p != o.trsvcid.data() + o.trsvcid.size() || port < 1 || port > 65535)
      return bad("trsvcid", o.trsvcid, "--trsvcid must be a port number 1..65535");
  }
  if (o.nqn.empty())
    return make_error(ErrorCode::kUsage, "missing --nqn", "the subsystem NQN is required",
                      "pass --nqn=<subsystem NQN> (rnvme discover lists them)");
  for (auto [name, value] : {std::pair{"nqn", &o.nqn}, std::pair{"hostnqn", &o.hostnqn}}) {
    if (value->empty()) continue;
    if (auto why = nqn_refusal(*value))
      return bad(name, *value,
                 fmt::format("the kernel refuses this --{}: {} (it takes any NQN of 1 to {} bytes "
                             "without commas or newlines)",
                             name, *why, kNqnMaxLen));
  }
  if (!o.hostid.empty() && !is_valid_uuid(o.hostid))
    return bad("hostid", o.hostid, "--hostid must be a UUID like 4f2d6f1e-8c1b-4f53-9a53-2f3e8c7a1b20");

  if (auto st = check_range("queue-size", o.queue_size, 16, 1024, "entries per I/O queue"); !st)
    return st;
  if (auto st = check_range("nr-io-queues", o.nr_io_queues, 1, 65535, "I/O queues"); !st) return st;
  if (auto st = check_range("nr-write-queues", o.nr_write_queues, 0, 65535, "write queues"); !st)
    return st;
  if (auto st = check_range("nr-poll-queues", o.nr_poll_queues, 0, 65535, "poll queues"); !st)
    return st;
  if (auto st = check_range("reconnect-delay", o.reconnect_delay, 1, 86400, "seconds"); !st)
    return st;
  if (auto st = check_range("ctrl-loss-tmo", o.ctrl_loss_tmo, -1, 31536000, "seconds, -1 = forever");
      !st)
    return st;
  if (auto st = check_range("fast-io-fail-tmo", o.fast_io_fail_tmo, -1, 31536000, "seconds, -1 = off");
      !st)
    return st;
  if (auto st = check_range("keep-alive-tmo", o.keep_alive_tmo, 0, 65535, "seconds"); !st) return st;
  if (auto st = check_range("tos", o.tos, 0, 255, "IP type of service"); !st) return st;
  for (auto [name, value] : {std::pair{"dhchap-secret", &o.dhchap_secret},
                             std::pair{"dhchap-ctrl-secret", &o.dhchap_ctrl_secret}}) {
    if (value->empty()) continue;
    if (auto why = dhchap_secret_problem(*value))
      return make_error(ErrorCode::kUsage, fmt::format("invalid --{}: {}", name, *why),
                        "nvme-core takes a key of the form DHHC-1:<hmac 00-03>:<base64 of a "
                        "32/48/64-byte key and its CRC-32>:",
                        "generate one with 'nvme gen-dhchap-key --nqn=<host NQN>' and give the same "
                        "key to the target");
  }
  if (!o.dhchap_ctrl_secret.empty() && o.dhchap_secret.empty())
    return make_error(ErrorCode::kUsage, "--dhchap-ctrl-secret without --dhchap-secret",
                      "the target authenticates itself within the host's authentication "
                      "(bidirectional DH-HMAC-CHAP)",
                      "pass the host's key too: --dhchap-secret=DHHC-1:...");
  return Ok{};
}

namespace {

// CRC-32 (IEEE 802.3, reflected), as the kernel's crc32_le over ~0 and inverted: the check
// value nvme-core appends to a DH-HMAC-CHAP key before base64.
uint32_t crc32_ieee(const unsigned char* p, size_t n) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    crc ^= p[i];
    for (int b = 0; b < 8; b++) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

std::optional<std::vector<unsigned char>> base64_decode(std::string_view s) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (s.size() % 4) return std::nullopt;
  std::vector<unsigned char> out;
  uint32_t acc = 0;
  int bits = 0;
  size_t pad = 0;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '=') {
      if (i + 2 < s.size()) return std::nullopt;
      pad++;
      continue;
    }
    if (pad) return std::nullopt;
    auto v = kAlphabet.find(s[i]);
    if (v == std::string_view::npos) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<unsigned char>(acc >> bits));
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> dhchap_secret_problem(std::string_view secret) {
  constexpr std::string_view kPrefix = "DHHC-1:";
  if (secret.substr(0, kPrefix.size()) != kPrefix)
    return std::string("it does not start with DHHC-1:");
  std::string_view rest = secret.substr(kPrefix.size());
  if (rest.size() < 4 || rest[2] != ':' || rest[0] != '0' || rest[1] < '0' || rest[1] > '3')
    return std::string("the key transformation after DHHC-1: must be 00, 01, 02 or 03");
  rest.remove_prefix(3);
  if (rest.empty() || rest.back() != ':') return std::string("it does not end with ':'");
  rest.remove_suffix(1);
  auto bytes = base64_decode(rest);
  if (!bytes) return std::string("the key is not base64");
  if (bytes->size() != 36 && bytes->size() != 52 && bytes->size() != 68)
    return fmt::format("the key is {} bytes with its CRC; nvme-core takes 32, 48 or 64 plus 4",
                       bytes->size());
  const size_t n = bytes->size() - 4;
  const uint32_t want = static_cast<uint32_t>((*bytes)[n]) | static_cast<uint32_t>((*bytes)[n + 1]) << 8 |
                        static_cast<uint32_t>((*bytes)[n + 2]) << 16 |
                        static_cast<uint32_t>((*bytes)[n + 3]) << 24;
  if (crc32_ieee(bytes->data(), n) != want)
    return std::string("its CRC does not match (a mistyped or truncated key)");
  return std::nullopt;
}

std::string redact_secrets(std::string_view s) {
  std::string out;
  while (!s.empty()) {
    auto end = s.find(',');
    std::string_view tok = s.substr(0, end);
    s = end == std::string_view::npos ? std::string_view{} : s.substr(end + 1);
    if (!out.empty()) out += ',';
    auto eq = tok.find('=');
    std::string_view key = tok.substr(0, eq);
    if (eq != std::string_view::npos && (key == "dhchap_secret" || key == "dhchap_ctrl_secret"))
      out += fmt::format("{}=(secret)", key);
    else
      out += tok;
  }
  return out;
}

std::vector<std::string> option_warnings(const ConnectOptions& o) {
  std::vector<std::string> w;
  for (auto [name, value] : {std::pair{"nqn", &o.nqn}, std::pair{"hostnqn", &o.hostnqn}}) {
    if (value->empty() || !is_valid_nqn(*value)) continue;
    if (auto odd = nqn_oddity(*value)) w.push_back(fmt::format("--{}: {}", name, *odd));
  }
  return w;
}

Result<std::string> build_option_string(const ConnectOptions& o) {
  if (auto st = validate(o); !st) return st.error();
  // Token order follows the grammar documented for /dev/nvme-fabrics; the kernel accepts any order.
  std::string s = fmt::format("transport={},traddr={}", o.transport, o.traddr);
  s += fmt::format(",trsvcid={}", o.trsvcid.empty() ? kDefaultRdmaPort : std::string_view(o.trsvcid));
  s += fmt::format(",nqn={}", o.nqn);
  if (!o.hostnqn.empty()) s += fmt::format(",hostnqn={}", o.hostnqn);
  if (!o.hostid.empty()) s += fmt::format(",hostid={}", o.hostid);
  if (!o.host_traddr.empty()) s += fmt::format(",host_traddr={}", o.host_traddr);
  if (!o.dhchap_secret.empty()) s += fmt::format(",dhchap_secret={}", o.dhchap_secret);
  if (!o.dhchap_ctrl_secret.empty())
    s += fmt::format(",dhchap_ctrl_secret={}", o.dhchap_ctrl_secret);
  auto num = [&s](std::string_view token, const std::optional<int>& v) {
    if (v) s += fmt::format(",{}={}", token, *v);
  };
  num("queue_size", o.queue_size);
  num("nr_io_queues", o.nr_io_queues);
  // 0 write or poll queues is the kernel's default, and it refuses the token with 0 ("Invalid
  // nr_poll_queues 0"): say nothing then
  auto num_some = [&s](std::string_view token, const std::optional<int>& v) {
    if (v && *v > 0) s += fmt::format(",{}={}", token, *v);
  };
  num_some("nr_write_queues", o.nr_write_queues);
  num_some("nr_poll_queues", o.nr_poll_queues);
  num("reconnect_delay", o.reconnect_delay);
  num("ctrl_loss_tmo", o.ctrl_loss_tmo);
  num("fast_io_fail_tmo", o.fast_io_fail_tmo);
  num("keep_alive_tmo", o.keep_alive_tmo);
  num("tos", o.tos);
  if (o.duplicate_connect) s += ",duplicate_connect";
  if (o.disable_sqflow) s += ",disable_sqflow";
  return s;
}

Result<ConnectReply> parse_connect_reply(std::string_view text) {
  ConnectReply r;
  const std::string_view whole = text;
  while (!text.empty()) {
    auto end = text.find_first_of(",\n");
    auto tok = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    auto eq = tok.find('=');
    if (eq == std::string_view::npos) continue;
    auto key = tok.substr(0, eq);
    auto val = tok.substr(eq + 1);
    int v = -1;
    auto [p, ec] = std::from_chars(val.data(), val.data() + val.size(), v);
    if (ec != std::errc()) continue;
    if (key == "instance") r.instance = v;
    if (key == "cntlid") r.cntlid = v;
  }
  if (r.instance < 0)
    return make_error(ErrorCode::kFailure,
                      fmt::format("unexpected reply from /dev/nvme-fabrics: '{}'", whole),
                      "the kernel did not report the new controller's instance");
  return r;
}

}  // namespace rnvme
