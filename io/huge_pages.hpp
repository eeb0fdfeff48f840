// Transparent huge pages for the heap. A fleet's world is hundreds of megabytes of state touched
// at random (its nodes, queued events, connections, the store's leases, the analysis of each
// service), so with 4 KB pages nearly every cache miss is a TLB miss too. glibc's malloc backs its
// heap with transparent huge pages when told so by the tunable glibc.malloc.hugetlb=1, and it
// reads tunables only as a program starts: so the program starts again, once, with it set.
#pragma once

namespace electsim::io {

// Starts this program again (same arguments, same open files) with glibc.malloc.hugetlb=1 (and a
// heap that grows 64 MB at a time, glibc.malloc.top_pad) added to GLIBC_TUNABLES, where that helps:
// on Linux with glibc, the kernel's transparent huge pages in `madvise` mode (in `always` mode the
// heap has them already; in `never` mode nothing can), and no glibc.malloc.hugetlb in the
// environment already (the user's own choice, =0 to decline, or this program's second start).
// Returns, changing nothing, where it does not apply or the new start fails. Call it first in
// main(), before any thread or output exists. Outcomes never depend on it: the simulator's results
// never depend on addresses.
void prefer_huge_pages(char** argv);

// Whether this process's heap is on transparent huge pages: the kernel's mode is `always`, or it is
// `madvise` and GLIBC_TUNABLES asks glibc for them. A benchmark's figures say which they were
// measured with.
bool heap_on_huge_pages();

}  // namespace electsim::io
