// The file system behind an interface: sysfs, /etc/nvme and /sys/class/nvme writes go through it
// so commands can be tested against an in-memory tree.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace rnvme {

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  virtual Result<std::string> read(const std::string& path) const = 0;
  virtual Status write(const std::string& path, std::string_view data) = 0;
  // Entry names of a directory, sorted; symlinks are followed.
  virtual Result<std::vector<std::string>> list(const std::string& dir) const = 0;
  virtual bool exists(const std::string& path) const = 0;
  // Replaces regular files as one step: their directories are created if missing, every new
  // content is written beside its file first, and only when all are written are they renamed over
  // the old ones (a failure before that changes nothing; readers never see a part of a file).
  virtual Status replace_files(const std::vector<std::pair<std::string, std::string>>& files) = 0;
};

// The real file system, optionally below `root` (RNVME_ROOT, for testing against a copied tree).
class RealFileSystem final : public FileSystem {
 public:
  explicit RealFileSystem(std::string root = {}) : root_(std::move(root)) {}
  Result<std::string> read(const std::string& path) const override;
  Status write(const std::string& path, std::string_view data) override;
  Result<std::vector<std::string>> list(const std::string& dir) const override;
  bool exists(const std::string& path) const override;
  Status replace_files(const std::vector<std::pair<std::string, std::string>>& files) override;

 private:
  std::string root_;
};

// In-memory tree: files by absolute path; directories are implied by the paths below them.
class FakeFileSystem final : public FileSystem {
 public:
  void add(const std::string& path, std::string content) { files_[path] = std::move(content); }
  void add_dir(const std::string& path) { dirs_.insert(path); }
  void remove(const std::string& path) {
    files_.erase(path);
    dirs_.erase(path);
  }
  Result<std::string> read(const std::string& path) const override;
  Status write(const std::string& path, std::string_view data) override;
  Result<std::vector<std::string>> list(const std::string& dir) const override;
  bool exists(const std::string& path) const override;
  // All files or none: a path in write_errors fails the whole call (each success is recorded in
  // `writes` like a write).
  Status replace_files(const std::vector<std::pair<std::string, std::string>>& files) override;

  // Every write, in order, as "path <- data".
  std::vector<std::pair<std::string, std::string>> writes;
  // Paths whose write fails with this errno.
  std::map<std::string, int> write_errors;

 private:
  std::map<std::string, std::string> files_;
  std::set<std::string> dirs_;
};

}  // namespace rnvme
