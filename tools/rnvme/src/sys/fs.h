// The file system behind an interface: sysfs, /etc/nvme and /sys/class/nvme writes go through it
// so commands can be tested against an in-memory tree.
#pragma once

#include <functional>
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
  // unlink(2) of a regular file; one that does not exist is no error.
  virtual Status remove_file(const std::string& path) = 0;
  // mkdir(2) (configfs creates the group's attributes then); an existing directory is no error.
  virtual Status make_dir(const std::string& path) = 0;
  // rmdir(2) (configfs drops the group); one that does not exist is no error.
  virtual Status remove_dir(const std::string& path) = 0;
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
  Status remove_file(const std::string& path) override;
  Status make_dir(const std::string& path) override;
  Status remove_dir(const std::string& path) override;

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
  // Recorded in `writes` as (path, "<removed>"), (path, "<mkdir>"), (path, "<rmdir>").
  Status remove_file(const std::string& path) override;
  Status make_dir(const std::string& path) override;  // runs on_mkdir, if set, after creating it
  Status remove_dir(const std::string& path) override;  // and every file below it

  // What a write leaves in the file, when set: sysfs attributes do not keep the bytes written
  // (queue/scheduler shows the choice in brackets among the others, values gain a newline).
  std::function<std::string(const std::string& path, const std::string& old, std::string_view data)>
      on_write;
  // Called after make_dir created `path` (configfs fills a new group with attributes).
  std::function<void(FakeFileSystem& fs, const std::string& path)> on_mkdir;
  // Called after a write was stored: what the kernel does on it beyond the file (delete_controller
  // removes the controller).
  std::function<void(FakeFileSystem& fs, const std::string& path, std::string_view data)> after_write;
  // The whole tree, for comparing before and after.
  const std::map<std::string, std::string>& files() const { return files_; }
  const std::set<std::string>& dirs() const { return dirs_; }

  // Every write, in order, as "path <- data".
  std::vector<std::pair<std::string, std::string>> writes;
  // Paths whose write fails with this errno.
  std::map<std::string, int> write_errors;

 private:
  std::map<std::string, std::string> files_;
  std::set<std::string> dirs_;
};

// A file's content without surrounding whitespace; "" when it cannot be read (sysfs attributes).
std::string read_trim(const FileSystem& fs, const std::string& path);
// A directory's entries; none when it cannot be listed.
std::vector<std::string> list_or_empty(const FileSystem& fs, const std::string& dir);

}  // namespace rnvme
