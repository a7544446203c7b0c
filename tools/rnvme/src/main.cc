// rnvme: NVMe-over-Fabrics RDMA host control tool. The only place that turns errors into exit
// codes and stderr text.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "cmd/commands.h"
#include "sys/hostnqn_gen.h"
#include "sys/sysfs.h"

int main(int argc, char** argv) {
  using namespace rnvme;
  CLI::App app{"rnvme: NVMe over Fabrics (RDMA) host control tool"};
  // one subcommand, or none with --version (checked after parsing)
  app.require_subcommand(0, 1);
  std::string format = "text";
  bool dry_run = false;
  int verbose = 0;
  bool json_flag = false;
  // nvme-cli's spellings too: "normal" is its text, --json the switch some commands had alone
  app.add_option("-o,--output-format", format, "text (nvme-cli: normal) or json")
      ->check(CLI::IsMember({"text", "normal", "json"}))
      ->capture_default_str();
  app.add_flag("--json", json_flag, "the same as -o json");
  app.add_flag("--dry-run", dry_run, "print what would be written; change nothing");
  app.add_flag("-v,--verbose", verbose, "print the option string and checks (repeatable)");
  bool version = false;
  app.add_flag("--version", version, "print the versions of rnvme and libnvme (rnvme version)");

  std::vector<std::pair<CLI::App*, Action>> actions;
  for (const auto& cmd : command_table()) {
    CLI::App* sub = app.add_subcommand(std::string(cmd.name), std::string(cmd.help));
    sub->fallthrough();  // global options may follow the subcommand
    actions.emplace_back(sub, cmd.setup(*sub));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : exit_code(ErrorCode::kUsage);
  }
  const bool any_subcommand =
      std::any_of(actions.begin(), actions.end(), [](const auto& a) { return a.first->parsed(); });
  if (!any_subcommand && !version) {
    app.exit(CLI::RequiredError("A subcommand"));
    return exit_code(ErrorCode::kUsage);
  }

  Printer printer(format == "json" || json_flag ? Format::kJson : Format::kText, std::cout, std::cerr);
  const char* root = std::getenv("RNVME_ROOT");
  RealFileSystem fs(root ? root : "");
  RealFabricsDevice fabrics;
  RealKernelLog kmsg;
  LibnvmeDiscoveryLogSource dlog;
  LibnlRdmaNetlink netlink;
  RealNetProbe net;
  VerbsPortQuery ports;
  Context ctx{fs, fabrics, kmsg, dlog, netlink, net, ports, printer, libnvme_generate_hostnqn, dry_run, verbose,
              static_cast<long>(::getpid())};

  for (auto& [sub, action] : actions) {
    // --version is the version command, whatever else is given
    if (version ? sub->get_name() != "version" : !sub->parsed()) continue;
    Status st = Ok{};
    try {
      st = action(ctx);
    } catch (const std::exception& ex) {
      // Nothing is expected to throw; if something does, say so plainly instead of aborting.
      st = make_error(ErrorCode::kFailure, std::string("internal error: ") + ex.what());
    }
    if (!st) {
      printer.print_error(st.error());
      return exit_code(st.error().code);
    }
    return ctx.exit_status;
  }
  return exit_code(ErrorCode::kUsage);
}
