// Outputs that appear whole or not at all. Every file is written under a temporary name unique to
// the process and the call ("<path>.XXXXXX.tmp", from mkstemps) beside its destination and renamed
// onto it only when complete, so two processes writing the same output never mix their bytes. A
// temporary is removed on every exit path: errors, destructors, and SIGINT, SIGTERM and SIGHUP
// through install_signal_cleanup().
#pragma once

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace electsim::io {

// A temporary file beside its destination; discarded when destroyed unless committed.
class TempFile {
 public:
  // Opens the temporary for `final_path`; on failure file() is null and error() says why.
  explicit TempFile(std::string final_path);
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile();

  std::FILE* file() const { return file_; }
  const std::string& final_path() const { return final_path_; }
  const std::string& temp_path() const { return temp_path_; }
  const std::string& error() const { return error_; }

  // Flushes and closes the temporary, which stays on disk under its temporary name until
  // commit() or discard(): several outputs can be made complete first and renamed together.
  // False (temporary removed) on any failure.
  bool finish();
  // Finishes (if not done yet) and renames onto the destination; false (temporary removed) on
  // any failure.
  bool commit();
  // Closes and removes the temporary (also what the destructor does).
  void discard();

 private:
  std::string final_path_;
  std::string temp_path_;
  std::FILE* file_ = nullptr;
  bool finished_ = false;
  int slot_ = -1;  // in the registry the signal handler cleans up
  std::string error_;
};

struct OutputFile {
  std::string path;
  std::string content;
};

// Files complete on disk under their temporary names, waiting to be renamed together.
using StagedFiles = std::vector<std::unique_ptr<TempFile>>;

// Writes `file` to a finished temporary beside its destination (not yet renamed); on failure
// returns null and sets `error`.
std::unique_ptr<TempFile> stage_file(const OutputFile& file, std::string& error);

// Renames every staged file onto its destination, in order; on the first failure the rest are
// removed and the message says which file failed and why.
std::optional<std::string> commit_all(StagedFiles& files);

// A problem when `path` cannot be written as an output: its folder is missing or not writable
// (found by creating and removing a temporary there, as the real write will), or it names a
// folder. Checked before a run so that a run never ends unable to write what it made.
std::optional<std::string> unwritable_output(const std::string& path);

// Writes every file, or none: each goes to its own temporary, and the renames happen only once
// all are written. On failure the temporaries are removed and the message says which file failed
// and why.
std::optional<std::string> write_files_whole(const std::vector<OutputFile>& files);

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove every live temporary and then end
// the process by the same signal (so the exit status still says which). Call once, from main.
void install_signal_cleanup();

// While a flag is set here, the first SIGINT or SIGTERM only sets it (a sweep then stops after the
// runs under way and writes what finished); the next one removes temporaries and ends the process.
// Pass nullptr to go back to ending at once.
void set_soft_stop(std::atomic<bool>* flag);

// A problem when two of `outputs` name the same file, or an output names one of `inputs`
// (compared by path and, for files that exist, by device and inode).
std::optional<std::string> clashing_paths(const std::vector<std::string>& outputs,
                                          const std::vector<std::string>& inputs);

}  // namespace electsim::io
