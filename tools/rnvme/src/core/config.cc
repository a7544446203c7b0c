#include "core/config.h"
#include "core/ip.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cstring>

#include "core/connect_cli.h"
#include "core/json_text.h"

namespace rnvme {
namespace {

// config.json's keys are the options' long names with '_' for '-', but for these (nvme-cli's
// names of the DH-HMAC-CHAP keys, --dhchap-secret and --dhchap-ctrl-secret on its command line).
constexpr std::pair<std::string_view, std::string_view> kJsonKeyRenames[] = {
    {"dhchap_key", "dhchap-secret"},
    {"dhchap_ctrl_key", "dhchap-ctrl-secret"},
};

std::string json_key(const OptionSpec& spec) {
  for (auto [key, option] : kJsonKeyRenames)
    if (option == spec.long_name) return std::string(key);
  std::string key(spec.long_name);
  for (auto& c : key)
    if (c == '-') c = '_';
  return key;
}

// The option a port's key names (find_option() takes '_' for '-'), or the key itself.
std::string_view option_of_json_key(std::string_view key) {
  for (auto [k, option] : kJsonKeyRenames)
    if (k == key) return option;
  return key;
}

bool is_secret(const OptionSpec& spec) {
  return spec.long_name == "dhchap-secret" || spec.long_name == "dhchap-ctrl-secret";
}

}  // namespace

Status parse_argument_line(std::string_view line, ConnectOptions& opts, DiscoveryFlags* flags) {
  // The command line's parser and option table: CLI11 splits the line (quotes as a shell would)
  // and the connect options take their values as they do on the command line.
  CLI::App app;
  app.set_help_flag();  // no -h/--help in a file line
  app.allow_extras();   // reported below, in rnvme's words
  std::optional<Error> refused;
  add_connect_options(app, opts, &refused);
  std::string format, raw;
  int verbose = 0;
  bool quiet = false;
  if (flags) {
    // nvme-cli's discover_from_conf_file() parses a line with discover's own options
    app.add_flag("-p,--persistent", flags->persistent);
    app.add_flag("--force", flags->force);
    app.add_option("-o,--output-format", format);  // not checked there either
    app.add_flag("-v,--verbose", verbose);
    app.add_flag("--quiet", quiet);
    app.add_option("-r,--raw", raw);
  }
  try {
    app.parse(std::string(line), /*program_name_included=*/false);
  } catch (const CLI::ParseError& e) {
    Error err = refused ? *refused : make_error(ErrorCode::kConfig, e.what());
    err.code = ErrorCode::kConfig;
    return err;
  }
  if (!raw.empty())
    return make_error(ErrorCode::kConfig, fmt::format("-r/--raw {} is not supported", raw),
                      "nvme-cli saves the discovery log to that file instead of connecting, and "
                      "rnvme has no raw log output: remove -r from the line ('rnvme discover -o "
                      "json' prints the log)");
  const auto extra = app.remaining();
  if (extra.empty()) return Ok{};
  if (extra.front().rfind('-', 0) == 0)
    return make_error(ErrorCode::kConfig, fmt::format("unknown option '{}'", extra.front()),
                      "see rnvme(8) for the accepted options");
  return make_error(ErrorCode::kConfig, fmt::format("unexpected word '{}'", extra.front()),
                    "options are written like nvme-cli's: --traddr=10.0.0.1 or -a 10.0.0.1");
}

Result<std::vector<ConfigEntry>> parse_discovery_conf(std::string_view text, std::string_view name) {
  std::vector<ConfigEntry> out;
  int lineno = 0;
  while (!text.empty()) {
    auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    lineno++;
    auto first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ConfigEntry e;
    e.source = fmt::format("{}:{}", name, lineno);
    e.opts.nqn = std::string(kDiscoveryNqn);
    if (auto st = parse_argument_line(line, e.opts, &e.discovery); !st) {
      const Error& err = st.error();
      e.skip = err.cause.empty() ? err.message : err.message + " (" + err.cause + ")";
    }
    out.push_back(std::move(e));
  }
  return out;
}

// Why this is not libnvme's nvme_read_config() (issue 32 item 9), checked against libnvme 1.3
// (Debian 12's is built with json-c), src/nvme/json.c:
// - json_update_attributes() sets ctrl_loss_tmo only when it is not NVMF_DEF_CTRL_LOSS_TMO and
//   tos only when it is not -1, the very defaults nvmf_default_config() gives a new controller:
//   a port's ctrl_loss_tmo and tos are dropped.
// - values are not checked: json_object_get_int() of "big" is 0, json_object_get_boolean() of
//   "false" (a string) is true; rnvme refuses such a port (`skip`, an error for the controller
//   it names) instead of connecting otherwise than the file says.
// - a port without "transport", a host without "hostnqn", a subsystem without "nqn", a port
//   that is not an object: dropped without a word (json_parse_port/_subsys/_host return); rnvme
//   names the host, subsystem and port at fault, and callers say why a port of another
//   transport is skipped.
// - the file is opened by path (no FileSystem, no RNVME_ROOT), a parse error is errno EPROTO
//   with the message at LOG_DEBUG, and the top-level {"hosts": [...]} form is refused.
// It keeps per-port dhchap_key/dhchap_ctrl_key and the host's dhchap_key; that alone would not
// make up for the above.
Result<std::vector<ConfigEntry>> parse_config_json(std::string_view text, std::string_view name) {
  using nlohmann::json;
  auto fail = [&](std::string what) {
    return make_error(ErrorCode::kConfig, fmt::format("{}: {}", name, what),
                      "the file must follow nvme-cli's config.json layout: a list of hosts, "
                      "each with 'subsystems', each with 'nqn' and 'ports'");
  };
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return fail("not valid JSON");
  if (root.is_object() && root.contains("hosts")) root = root["hosts"];
  if (!root.is_array()) return fail("top level is not a list of hosts");

  std::vector<ConfigEntry> out;
  for (size_t h = 0; h < root.size(); h++) {
    const json& host = root[h];
    if (!host.is_object()) return fail(fmt::format("host {} is not an object", h));
    // json::value() throws on a key of another type: the file's text must not end as an
    // "internal error"
    std::string hostnqn, hostid;
    for (auto [key, slot] : {std::pair{"hostnqn", &hostnqn}, std::pair{"hostid", &hostid}}) {
      if (!host.contains(key)) continue;
      if (!host[key].is_string()) return fail(fmt::format("host {}: '{}' is not a string", h, key));
      *slot = host[key].get<std::string>();
    }
    // nvme-cli's host-wide key, for ports that name none of their own
    std::string host_key =
        host.contains("dhchap_key") && host["dhchap_key"].is_string() ? host["dhchap_key"].get<std::string>() : "";
    if (!host.contains("subsystems")) continue;
    const json& subs = host["subsystems"];
    if (!subs.is_array()) return fail(fmt::format("host {}: 'subsystems' is not a list", h));
    for (size_t s = 0; s < subs.size(); s++) {
      const json& sub = subs[s];
      if (!sub.is_object() || !sub.contains("nqn") || !sub["nqn"].is_string())
        return fail(fmt::format("host {} subsystem {}: missing 'nqn'", h, s));
      const json& ports = sub.contains("ports") ? sub["ports"] : json::array();
      if (!ports.is_array()) return fail(fmt::format("host {} subsystem {}: 'ports' is not a list", h, s));
      for (size_t p = 0; p < ports.size(); p++) {
        const json& port = ports[p];
        if (!port.is_object()) return fail(fmt::format("host {} subsystem {} port {}: not an object", h, s, p));
        ConfigEntry e;
        e.source = fmt::format("{} host {} subsystem {} port {}", name, h, s, p);
        e.opts.nqn = sub["nqn"].get<std::string>();
        e.opts.hostnqn = hostnqn;
        e.opts.hostid = hostid;
        e.opts.dhchap_secret = host_key;
        for (const auto& [key, val] : port.items()) {
          // config.json's names for the DH-HMAC-CHAP keys (nvme-cli: --dhchap-secret/-ctrl-secret)
          const std::string_view opt = option_of_json_key(key);
          if (opt != key && val.is_string() && val.get<std::string>().empty()) continue;
          const OptionSpec* spec = find_option(opt);
          if (!spec) continue;  // nvme-cli keys rnvme has no use for (persistent, discovery, ...)
          std::string v;
          if (val.is_string())
            v = val.get<std::string>();
          else if (val.is_boolean())
            v = val.get<bool>() ? "true" : "false";
          else if (val.is_number_integer())
            v = std::to_string(val.get<long long>());
          else
            return fail(fmt::format("{}: '{}' has an unsupported type", e.source, key));
          // a bad value costs this port, not the file
          if (auto st = set_option(e.opts, *spec, v); !st && e.skip.empty())
            e.skip = st.error().message;
        }
        out.push_back(std::move(e));
      }
    }
  }
  return out;
}

namespace {

// Two spellings of one address (IPv6 has many) are the same address.
bool same_address(const std::string& a, const std::string& b) {
  if (a == b) return true;
  auto x = parse_ip(a), y = parse_ip(b);
  return x && y && *x == *y;
}

}  // namespace

const ConfigEntry* find_config_port(const std::vector<ConfigEntry>& entries,
                                    const ConnectOptions& opts, std::string_view hostnqn) {
  for (const auto& e : entries) {
    const ConnectOptions& c = e.opts;
    if (c.nqn != opts.nqn || !same_address(c.traddr, opts.traddr) ||
        c.trsvcid_or_default() != opts.trsvcid_or_default())
      continue;
    if (!is_rdma_transport_name(c.transport)) continue;
    if (!hostnqn.empty() && !c.hostnqn.empty() && c.hostnqn != hostnqn) continue;  // another host's
    if (!opts.host_traddr.empty() && !c.host_traddr.empty() &&
        !same_address(c.host_traddr, opts.host_traddr))
      continue;
    return &e;
  }
  return nullptr;
}

void fill_unset(ConnectOptions& into, const ConnectOptions& from) {
  for (auto f : {&ConnectOptions::hostnqn, &ConnectOptions::hostid, &ConnectOptions::host_traddr,
                 &ConnectOptions::dhchap_secret, &ConnectOptions::dhchap_ctrl_secret})
    if ((into.*f).empty()) into.*f = from.*f;
  for (auto f : {&ConnectOptions::queue_size, &ConnectOptions::nr_io_queues,
                 &ConnectOptions::nr_write_queues, &ConnectOptions::nr_poll_queues,
                 &ConnectOptions::reconnect_delay, &ConnectOptions::ctrl_loss_tmo,
                 &ConnectOptions::fast_io_fail_tmo, &ConnectOptions::keep_alive_tmo,
                 &ConnectOptions::tos})
    if (!(into.*f)) into.*f = from.*f;
  for (auto f : {&ConnectOptions::duplicate_connect, &ConnectOptions::disable_sqflow})
    into.*f = into.*f || from.*f;
}

std::string render_config_json(const std::vector<ConnectOptions>& ports) {
  using nlohmann::ordered_json;
  ordered_json hosts = ordered_json::array();
  for (const ConnectOptions& o : ports) {
    ordered_json* host = nullptr;
    for (auto& h : hosts)
      if (h.value("hostnqn", "") == o.hostnqn && h.value("hostid", "") == o.hostid) host = &h;
    if (!host) {
      ordered_json h = ordered_json::object();
      if (!o.hostnqn.empty()) h["hostnqn"] = o.hostnqn;
      if (!o.hostid.empty()) h["hostid"] = o.hostid;
      h["subsystems"] = ordered_json::array();
      hosts.push_back(std::move(h));
      host = &hosts.back();
    }
    ordered_json& subs = (*host)["subsystems"];
    ordered_json* sub = nullptr;
    for (auto& s : subs)
      if (s["nqn"] == o.nqn) sub = &s;
    if (!sub) {
      subs.push_back({{"nqn", o.nqn}, {"ports", ordered_json::array()}});
      sub = &subs.back();
    }
    ConnectOptions copy = o;  // the table's accessors take a mutable one
    ordered_json port = ordered_json::object();
    for (const auto& spec : option_table()) {
      // the subsystem's and the host's, above
      if (spec.long_name == "nqn" || spec.long_name == "hostnqn" || spec.long_name == "hostid")
        continue;
      switch (spec.kind) {
        case OptionKind::kString:
          if (const std::string& v = *spec.str(copy); !v.empty())
            port[json_key(spec)] = is_secret(spec) ? std::string("(secret)") : v;
          break;
        case OptionKind::kInt:
          if (const auto& v = *spec.num(copy)) port[json_key(spec)] = *v;
          break;
        case OptionKind::kFlag:
          if (*spec.flag(copy)) port[json_key(spec)] = true;
          break;
        case OptionKind::kNotRdma:
        case OptionKind::kNotRdmaFlag:
          break;
      }
    }
    (*sub)["ports"].push_back(std::move(port));
  }
  return dump_json(hosts, 2) + "\n";
}

Result<ConfigEntry> parse_event_instance(std::string_view instance) {
  const size_t sep = instance.rfind('_');
  if (sep == std::string_view::npos || sep == 0 || sep + 1 == instance.size())
    return make_error(ErrorCode::kUsage,
                      fmt::format("--event '{}': expected TRADDR_TRSVCID (e.g. 192.0.2.2_4420)",
                                  instance));
  ConfigEntry e;
  e.source = fmt::format("discovery change event {}", instance);
  e.opts.transport = "rdma";
  e.opts.traddr = std::string(instance.substr(0, sep));
  e.opts.trsvcid = std::string(instance.substr(sep + 1));
  e.opts.nqn = std::string(kDiscoveryNqn);
  if (auto st = validate(e.opts); !st) {
    Error err = st.error();
    err.message = fmt::format("--event '{}': {}", instance, err.message);
    return err;
  }
  return e;
}

}  // namespace rnvme
