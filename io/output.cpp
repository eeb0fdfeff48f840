// Whole-or-nothing outputs and their cleanup on signals (io/output.hpp).
#include "io/output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>

#include <fmt/format.h>

namespace electsim::io {

namespace {

// The temporaries alive now, for the signal handler: fixed storage, so the handler reads it
// without allocating. A slot is claimed under the mutex and published by `live`. Enough for
// every output of `electsim run --all-variants` (64 variants, five outputs each) held until the
// last run ends.
constexpr int kSlots = 384;
constexpr std::size_t kPathMax = 4096;
struct Slot {
  std::atomic<bool> live{false};
  std::array<char, kPathMax> path{};
};
std::array<Slot, kSlots> g_slots;
std::mutex g_slots_mutex;

std::atomic<std::atomic<bool>*> g_soft_stop{nullptr};
std::atomic<mode_t> g_umask{022};

int claim_slot(const std::string& path) {
  if (path.size() + 1 > kPathMax) return -1;
  const std::lock_guard<std::mutex> lock(g_slots_mutex);
  for (int i = 0; i < kSlots; ++i) {
    if (!g_slots[i].live.load()) {
      std::memcpy(g_slots[i].path.data(), path.c_str(), path.size() + 1);
      g_slots[i].live.store(true);
      return i;
    }
  }
  return -1;
}

void release_slot(int slot) {
  if (slot >= 0) g_slots[slot].live.store(false);
}

extern "C" void on_terminating_signal(int signal_number) {
  std::atomic<bool>* stop = g_soft_stop.load();
  if (stop != nullptr && !stop->exchange(true)) return;  // the first one only asks to stop
  for (Slot& slot : g_slots) {
    if (slot.live.load()) ::unlink(slot.path.data());  // async-signal-safe
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

// The identity of an existing file, to tell two spellings of one path apart.
std::optional<std::pair<dev_t, ino_t>> identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::make_pair(st.st_dev, st.st_ino);
}

// True when `a` and `b` name one file: the same text, the same normalised path (for files that do
// not exist yet), or the same device and inode.
bool same_file(const std::string& a, const std::string& b) {
  if (a == b) return true;
  std::error_code ea;
  std::error_code eb;
  // absolute() first: weakly_canonical leaves a relative path with no existing part relative.
  const auto ca = std::filesystem::weakly_canonical(std::filesystem::absolute(a, ea), ea);
  const auto cb = std::filesystem::weakly_canonical(std::filesystem::absolute(b, eb), eb);
  if (!ea && !eb && ca == cb) return true;
  const auto ia = identity(a);
  return ia && ia == identity(b);
}

}  // namespace

TempFile::TempFile(std::string final_path) : final_path_(std::move(final_path)) {
  std::string name = final_path_ + ".XXXXXX.tmp";
  const int fd = ::mkstemps(name.data(), 4);
  if (fd < 0) {
    error_ = fmt::format("cannot write {}: {}", final_path_, std::strerror(errno));
    return;
  }
  temp_path_ = name;
  slot_ = claim_slot(temp_path_);
  // mkstemps makes the file 0600; an output gets the usual permissions under the umask.
  ::fchmod(fd, static_cast<mode_t>(0666) & ~g_umask.load());
  file_ = ::fdopen(fd, "wb");
  if (file_ == nullptr) {
    error_ = fmt::format("cannot write {}: {}", final_path_, std::strerror(errno));
    ::close(fd);
    discard();
  }
}

TempFile::~TempFile() {
  discard();
}

bool TempFile::finish() {
  if (finished_) return true;
  if (file_ == nullptr) {
    if (error_.empty()) error_ = fmt::format("cannot write {}", final_path_);
    discard();
    return false;
  }
  const bool flushed = std::fflush(file_) == 0 && std::ferror(file_) == 0;
  const int flush_errno = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    error_ = fmt::format("cannot write {}: {}", final_path_,
                         std::strerror(flushed ? errno : flush_errno));
    discard();
    return false;
  }
  finished_ = true;
  return true;
}

bool TempFile::commit() {
  if (!finish()) return false;
  if (std::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    error_ =
        fmt::format("cannot rename {} to {}: {}", temp_path_, final_path_, std::strerror(errno));
    discard();
    return false;
  }
  release_slot(slot_);
  slot_ = -1;
  temp_path_.clear();
  finished_ = false;
  return true;
}

void TempFile::discard() {
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
  if (!temp_path_.empty()) {
    std::remove(temp_path_.c_str());
    temp_path_.clear();
  }
  finished_ = false;
  release_slot(slot_);
  slot_ = -1;
}

std::unique_ptr<TempFile> stage_file(const OutputFile& file, std::string& error) {
  auto t = std::make_unique<TempFile>(file.path);
  if (t->file() == nullptr) {
    error = t->error();
    return nullptr;
  }
  if (std::fwrite(file.content.data(), 1, file.content.size(), t->file()) != file.content.size()) {
    error = fmt::format("cannot write {}: {}", file.path, std::strerror(errno));
    return nullptr;
  }
  if (!t->finish()) {
    error = t->error();
    return nullptr;
  }
  return t;
}

std::optional<std::string> commit_all(StagedFiles& files) {
  for (auto& t : files) {
    if (t && !t->commit()) {
      std::string error = t->error();
      files.clear();  // the rest are removed
      return error;
    }
  }
  files.clear();
  return std::nullopt;
}

std::optional<std::string> unwritable_output(const std::string& path) {
  if (path.empty()) return std::string("an empty path");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return fmt::format("cannot write {}: it is a directory", path);
  }
  TempFile probe(path);
  if (probe.file() == nullptr) return probe.error();
  return std::nullopt;  // the probe removes itself
}

std::optional<std::string> write_files_whole(const std::vector<OutputFile>& files) {
  StagedFiles temps;
  for (const OutputFile& f : files) {
    std::string error;
    temps.push_back(stage_file(f, error));
    if (!temps.back()) return error;
  }
  // Every file is complete on disk; only the renames remain.
  return commit_all(temps);
}

void install_signal_cleanup() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  g_umask.store(mask);
  struct sigaction action {};
  action.sa_handler = on_terminating_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (const int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &action, nullptr);
}

void set_soft_stop(std::atomic<bool>* flag) {
  g_soft_stop.store(flag);
}

std::optional<std::string> clashing_paths(const std::vector<std::string>& outputs,
                                          const std::vector<std::string>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (std::size_t j = i + 1; j < outputs.size(); ++j) {
      if (same_file(outputs[i], outputs[j])) {
        return fmt::format("two outputs name the same file {}; give each its own path", outputs[i]);
      }
    }
    for (const std::string& in : inputs) {
      if (same_file(outputs[i], in)) {
        return fmt::format("the output {} is also an input; writing it would destroy the input",
                           outputs[i]);
      }
    }
  }
  return std::nullopt;
}

}  // namespace electsim::io
