// The host NQN libnvme generates, for `rnvme hostnqn generate`.
#pragma once

#include <string>

#include "core/hostid.h"
#include "core/result.h"

namespace rnvme {

// libnvme's nvmf_hostnqn_generate() (the same as `nvme gen-hostnqn`): "nqn.2014-08.org.
// nvmexpress:uuid:<uuid>" with the machine's DMI product UUID (/sys/class/dmi/id/product_uuid,
// else /sys/firmware/dmi/entries), else the device tree's partition UUID, else a random UUID.
// libnvme 1.3 reads those fixed paths and cannot be pointed at RNVME_ROOT: commands reach it
// through Context::generate_hostnqn, which tests replace.  The caller checks the result
// (generated_hostnqn_problem).  `stable`: two calls gave the same host NQN (libnvme 1.3 says
// nothing of where the UUID came from; a random one differs every time).
Result<GeneratedHostnqn> libnvme_generate_hostnqn();

}  // namespace rnvme
