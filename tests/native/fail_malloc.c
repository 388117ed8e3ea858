/* A malloc for LD_PRELOAD that fails chosen allocations of the kernels' own (test_kernels_without_memory.py).
 *
 * The target allocations: malloc and calloc (the compiler may turn a malloc and a memset to zero into a
 * calloc) of at least OC_FAIL_MALLOC_MIN bytes (default 4096) whose caller lies in a shared object whose
 * path contains OC_FAIL_MALLOC_LIB: the kernels' working memory, not what ORT, NumPy, Python or operator
 * new allocate for them. A site: the return address of a target allocation (one call in the code).
 *
 *   oc_malloc_faults(site, first, count)  from now: number the target allocations from 0, those of `site`
 *                                         only if site is not NULL, and fail those numbered [first,
 *                                         first + count) (NULL, errno ENOMEM); count 0: fail none
 *   oc_malloc_sites(out, max)             the distinct sites of the target allocations since, in the order
 *                                         first seen (up to max into out; returns how many there were)
 *   oc_failed_mallocs()                   how many failed since
 *
 * The rest goes to glibc's own (__libc_malloc, __libc_calloc): glibc only. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);

enum { kMaxSites = 256 };

static atomic_int active; /* oc_malloc_faults was called */
static void* _Atomic only_site;
static atomic_long seen, failed, first_fail, fail_count;
static void* _Atomic sites[kMaxSites];
static atomic_int nsites;
/* dladdr may allocate: no recursion into the check (initial-exec: its first touch on a thread must not
   allocate either; a preloaded library gets static TLS) */
static __thread int inside __attribute__((tls_model("initial-exec")));

void oc_malloc_faults(void* site, long first, long count) {
  atomic_store(&active, 0);
  atomic_store(&only_site, site);
  atomic_store(&seen, 0);
  atomic_store(&failed, 0);
  atomic_store(&first_fail, first);
  atomic_store(&fail_count, count);
  for (int i = 0; i < kMaxSites; ++i) atomic_store(&sites[i], NULL);
  atomic_store(&nsites, 0);
  atomic_store(&active, 1);
}

int oc_malloc_sites(void** out, int max) {
  int n = 0;
  for (int i = 0; i < kMaxSites; ++i) {
    void* s = atomic_load(&sites[i]);
    if (s == NULL) break;
    if (n < max) out[n] = s;
    ++n;
  }
  return n;
}

long oc_failed_mallocs(void) { return atomic_load(&failed); }

static int from_target(void* caller) {
  const char* lib = getenv("OC_FAIL_MALLOC_LIB");
  if (lib == NULL || lib[0] == 0) return 0;
  Dl_info info;
  inside = 1;
  const int found = dladdr(caller, &info);
  inside = 0;
  return found && info.dli_fname != NULL && strstr(info.dli_fname, lib) != NULL;
}

/* Records caller among the sites (a slot taken by compare-exchange: threads may race). */
static void note_site(void* caller) {
  for (int i = 0; i < kMaxSites; ++i) {
    void* s = atomic_load(&sites[i]);
    if (s == caller) return;
    if (s == NULL) {
      void* expected = NULL;
      if (atomic_compare_exchange_strong(&sites[i], &expected, caller) || expected == caller) return;
    }
  }
}

/* Whether this allocation, from caller, fails. */
static int fails(size_t bytes, void* caller) {
  if (!atomic_load_explicit(&active, memory_order_relaxed) || inside) return 0;
  const char* min = getenv("OC_FAIL_MALLOC_MIN");
  if (bytes < (min ? (size_t)strtoull(min, NULL, 10) : 4096) || !from_target(caller)) return 0;
  note_site(caller);
  void* site = atomic_load(&only_site);
  if (site != NULL && site != caller) return 0;
  const long i = atomic_fetch_add(&seen, 1) - atomic_load(&first_fail);
  if (i < 0 || i >= atomic_load(&fail_count)) return 0;
  atomic_fetch_add(&failed, 1);
  errno = ENOMEM;
  return 1;
}

void* malloc(size_t bytes) { return fails(bytes, __builtin_return_address(0)) ? NULL : __libc_malloc(bytes); }

void* calloc(size_t count, size_t size) {
  const size_t bytes = size != 0 && count > (size_t)-1 / size ? (size_t)-1 : count * size;
  return fails(bytes, __builtin_return_address(0)) ? NULL : __libc_calloc(count, size);
}
