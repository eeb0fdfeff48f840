#include "io/huge_pages.hpp"

#include <cstdlib>  // first: it defines __GLIBC__, which the tests below read

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define ELECTSIM_OWN_MALLOC 1  // a sanitizer's allocator: glibc's tunables do not reach it
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ELECTSIM_OWN_MALLOC 1
#endif

#if defined(__linux__) && defined(__GLIBC__) && !defined(ELECTSIM_OWN_MALLOC)
#include <unistd.h>

#include <cstddef>
#include <fstream>
#include <string>
#endif

namespace electsim::io {

#if defined(__linux__) && defined(__GLIBC__) && !defined(ELECTSIM_OWN_MALLOC)
namespace {
// The kernel's mode of transparent huge pages, the bracketed word of "always [madvise] never";
// empty if unknown.
std::string kernel_mode() {
  std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(file, line)) return {};
  const std::size_t open = line.find('[');
  const std::size_t close = line.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return {};
  return line.substr(open + 1, close - open - 1);
}

std::string tunables() {
  const char* value = std::getenv("GLIBC_TUNABLES");
  return value != nullptr ? value : "";
}
}  // namespace
#endif

void prefer_huge_pages(char** argv) {
#if defined(__linux__) && defined(__GLIBC__) && !defined(ELECTSIM_OWN_MALLOC)
  const bool had_tunables = std::getenv("GLIBC_TUNABLES") != nullptr;
  const std::string before = tunables();
  if (before.find("glibc.malloc.hugetlb") != std::string::npos) return;
  // glibc acts on the tunable only in madvise mode (malloc/malloc.c, do_set_hugetlb).
  if (kernel_mode() != "madvise") return;
  // The heap also grows 64 MB at a time (M_TOP_PAD): grown in small steps, each of which glibc
  // advises separately, the kernel's time went from 0.2 s to 1 s of a 12 s fleet; with it, 0.3 s.
  std::string ours = "glibc.malloc.hugetlb=1";
  if (before.find("glibc.malloc.top_pad") == std::string::npos) {
    ours += ":glibc.malloc.top_pad=67108864";  // unless the user chose a pad
  }
  const std::string after = before.empty() ? ours : before + ":" + ours;
  // The program's own file, not /proc/self/exe: a process is named after the file it runs, and
  // `ps` and `top` should show electsim.
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0 || static_cast<std::size_t>(length) >= sizeof self - 1) return;
  self[length] = '\0';
  if (setenv("GLIBC_TUNABLES", after.c_str(), 1) != 0) return;
  execv(self, argv);
  // Still here: the new start failed (no /proc, say). Carry on as started, and leave the
  // environment of any child as it was.
  if (had_tunables) {
    setenv("GLIBC_TUNABLES", before.c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
#else
  (void)argv;
#endif
}

bool heap_on_huge_pages() {
#if defined(__linux__) && defined(__GLIBC__) && !defined(ELECTSIM_OWN_MALLOC)
  const std::string mode = kernel_mode();
  if (mode == "always") return true;
  const std::string value = tunables();
  return mode == "madvise" && value.find("glibc.malloc.hugetlb=0") == std::string::npos &&
         value.find("glibc.malloc.hugetlb") != std::string::npos;
#else
  return false;
#endif
}

}  // namespace electsim::io
