// /etc/nvme/hostnqn and /etc/nvme/hostid as connect, connect-all, `rnvme hostnqn` and doctor
// read them: one reader, through FileSystem (so below RNVME_ROOT, and faked in tests).
#pragma once

#include <string_view>

#include "core/hostid.h"
#include "sys/fs.h"

namespace rnvme {

// The two files as they are (untrimmed; check_host_identity() judges them); a file that cannot be
// read is missing (nullopt). A value given on the command line (not empty) is taken instead of
// its file, which is then not read, with "--hostnqn" / "--hostid" as its source.
//
// Not libnvme's nvmf_hostnqn_from_file()/nvmf_hostid_from_file() (libnvme 1.3,
// src/nvme/fabrics.c, nvmf_read_file()): those read the fixed /etc/nvme paths (no RNVME_ROOT),
// return NULL alike for a missing, an unreadable and an empty file (rnvme leaves a missing file
// to the kernel's default host but refuses an empty one), and read at most NVMF_NQN_SIZE-1 /
// NVMF_HOSTID_SIZE-1 bytes, so a hostnqn too long for the kernel or a hostid with more after the
// UUID comes back cut to a valid-looking value and nqn_refusal()/is_valid_uuid() could not see it.
HostIdentityInput read_host_identity(const FileSystem& fs, std::string_view given_hostnqn = {},
                                     std::string_view given_hostid = {});

}  // namespace rnvme
