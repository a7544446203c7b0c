#include "cmd/commands.h"
#include "sys/sysfs.h"

namespace rnvme {

Status run_list(Context& ctx) {
  ctx.out.print(scan_topology(ctx.fs));
  return Ok{};
}

Action setup_list(CLI::App&) {
  return [](Context& ctx) { return run_list(ctx); };
}

}  // namespace rnvme
