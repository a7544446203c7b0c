#include "cmd/commands.h"
#include "sys/nvme_admin.h"

namespace rnvme {

Status run_version(Context& ctx, const VersionInfo& info) {
  ctx.out.print(info);
  return Ok{};
}

Action setup_version(CLI::App&) {
  return [](Context& ctx) { return run_version(ctx, build_version_info(libnvme_runtime_version())); };
}

}  // namespace rnvme
