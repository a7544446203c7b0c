// Connect options: the model behind `connect`, `discover`, discovery.conf and config.json, and the
// exact option string nvme-fabrics parses from /dev/nvme-fabrics.
#pragma once

#include "core/ip.h"
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace rnvme {

inline constexpr std::string_view kDiscoveryNqn = "nqn.2014-08.org.nvmexpress.discovery";
inline constexpr std::string_view kDefaultRdmaPort = "4420";  // NVME_RDMA_IP_PORT
inline constexpr size_t kNqnMaxLen = 222;                      // < NVMF_NQN_SIZE (223) bytes

struct ConnectOptions {
  std::string transport = "rdma";
  std::string traddr;
  std::string trsvcid;      // empty: the kernel's default, 4420
  std::string nqn;
  std::string hostnqn;      // empty: the kernel's default host
  std::string hostid;
  std::string host_traddr;
  // in-band authentication (DH-HMAC-CHAP), "DHHC-1:..." as nvme gen-dhchap-key prints them
  std::string dhchap_secret;       // the host's key: the target authenticates the host
  std::string dhchap_ctrl_secret;  // the controller's key: the host authenticates the target
  std::optional<int> queue_size;
  std::optional<int> nr_io_queues;
  std::optional<int> nr_write_queues;
  std::optional<int> nr_poll_queues;
  std::optional<int> reconnect_delay;
  std::optional<int> ctrl_loss_tmo;
  std::optional<int> fast_io_fail_tmo;
  std::optional<int> keep_alive_tmo;
  std::optional<int> tos;
  bool duplicate_connect = false;
  bool disable_sqflow = false;
  // nvme-cli options given that do not apply to RDMA, each with why it was ignored
  std::vector<std::string> ignored;

  bool is_discovery() const { return nqn == kDiscoveryNqn; }
  // The port the kernel connects to: trsvcid, or its default.
  std::string_view trsvcid_or_default() const {
    return trsvcid.empty() ? kDefaultRdmaPort : std::string_view(trsvcid);
  }
};

// One row per option the tool accepts, shared by the command line and discovery.conf so both
// grammars stay identical (nvme-cli's long names and short letters).
// kNotRdma / kNotRdmaFlag: nvme-cli options (with and without a value) that do not apply to an
// RDMA connect; accepted so that nvme-cli's lines and scripts work, and reported as ignored.
enum class OptionKind { kString, kInt, kFlag, kNotRdma, kNotRdmaFlag };
// The numbers nvme-cli takes for "not given" (libnvme 1.3's build_options() writes no token for
// them, and the kernel's default holds): kZeroOrMinusOne for the counts and timeouts it leaves out
// unless positive, kMinusOne for tos (0 is a ToS). set_option() leaves the option unset for them.
enum class DefaultValues { kNone, kZeroOrMinusOne, kMinusOne };
struct OptionSpec {
  std::string_view long_name;   // without "--"
  char short_name;              // 0: none
  OptionKind kind;
  std::string_view help;
  std::string* (*str)(ConnectOptions&);
  std::optional<int>* (*num)(ConnectOptions&);
  bool* (*flag)(ConnectOptions&);
  std::string_view alias = {};  // another long name (nvme-cli's spelling), if any
  DefaultValues defaults = DefaultValues::kNone;  // kInt: values that mean "the default"

  bool is_flag() const { return kind == OptionKind::kFlag || kind == OptionKind::kNotRdmaFlag; }
};
const std::vector<OptionSpec>& option_table();
const OptionSpec* find_option(std::string_view long_or_short);

// Sets one option from its textual value, as the command line and discovery.conf would.
Status set_option(ConnectOptions& opts, const OptionSpec& spec, std::string_view value);

// Rejects values nvme-fabrics would refuse, with the option's name and the accepted range.
Status validate(const ConnectOptions& opts);
// What validate() lets through but a user should hear about (an NQN not in the NVMe form).
std::vector<std::string> option_warnings(const ConnectOptions& opts);

// The exact string written to /dev/nvme-fabrics (validates first).
Result<std::string> build_option_string(const ConnectOptions& opts);
// The same string for the eye: DH-HMAC-CHAP secrets replaced by "(secret)".
std::string redact_secrets(std::string_view option_string);

// Why a DH-HMAC-CHAP secret is not one nvme-core takes ("DHHC-1:<hmac>:<base64 key+crc>:"),
// or nullopt when it is well formed.
std::optional<std::string> dhchap_secret_problem(std::string_view secret);

struct ConnectReply {
  int instance = -1;  // N in /dev/nvmeN
  int cntlid = -1;
};
// Parses "instance=N,cntlid=M\n" as read back from /dev/nvme-fabrics.
Result<ConnectReply> parse_connect_reply(std::string_view text);

bool is_rdma_transport_name(std::string_view t);

}  // namespace rnvme
