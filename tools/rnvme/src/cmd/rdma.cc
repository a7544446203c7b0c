#include <fmt/format.h>

#include "cmd/commands.h"

namespace rnvme {
namespace {

Error usage() {
  return make_error(ErrorCode::kUsage, "bad rdma command",
                    "expected 'rdma [show]', 'rdma link add NAME type rxe netdev DEV' or "
                    "'rdma link del NAME'");
}

}  // namespace

Status run_rdma(Context& ctx, const RdmaArgs& args) {
  const auto& w = args.words;
  if (w.empty() || (w.size() == 1 && w[0] == "show")) {
    auto devs = rdma_inventory(ctx);
    if (!devs) return devs.error();
    ctx.out.print(*devs);
    return Ok{};
  }
  if (w[0] != "link" || w.size() < 3) return usage();
  const std::string& name = w[2];
  if (w[1] == "add") {
    std::string type, netdev;
    for (size_t i = 3; i + 1 < w.size(); i += 2) {
      if (w[i] == "type") type = w[i + 1];
      else if (w[i] == "netdev") netdev = w[i + 1];
      else return usage();
    }
    if (type.empty() || netdev.empty() || (w.size() - 3) % 2) return usage();
    if (ctx.dry_run) {
      ctx.out.note(fmt::format("would add RDMA link {} type {} netdev {}", name, type, netdev));
      return Ok{};
    }
    return ctx.netlink.add_link(name, type, netdev);
  }
  if ((w[1] == "del" || w[1] == "delete") && w.size() == 3) {
    if (ctx.dry_run) {
      ctx.out.note(fmt::format("would delete RDMA link {}", name));
      return Ok{};
    }
    return ctx.netlink.del_link(name);
  }
  return usage();
}

Action setup_rdma(CLI::App& sub) {
  auto args = std::make_shared<RdmaArgs>();
  sub.add_option("words", args->words,
                 "[show] | link add NAME type rxe netdev DEV | link del NAME");
  return [args](Context& ctx) { return run_rdma(ctx, *args); };
}

}  // namespace rnvme
