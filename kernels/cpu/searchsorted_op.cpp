// SearchSorted on the CPU, as an ortcustom kernel (ortcustom/kernel.h): torch.searchsorted's
// bisection (the first i with s[i] >= v, or s[i] > v for the right side, halving [0, n)), run for
// kGroup values in lockstep with no data-dependent branch: their loads are independent, so a
// sequence larger than the caches costs one memory latency per step for the whole group, not per
// value. The same steps as torch's loop, so unsorted rows and NaNs give torch's answers. A short
// row found ascending and NaN-free (checked per row: O(n)) is searched by counting instead, every
// boundary against a block of values: the same answers, with vector compares and no loads that
// depend on the last step.
#include <string.h>

#include <atomic>

#include "../searchsorted_op.h"
#include "parallel.h"
#include "runner.h"

namespace {

using oc::detail::Conv;
using oc::detail::num_tasks;
using oc::detail::parallel_for;
using oc::detail::split_range;

constexpr int kGroup = 16;
// Rows of at most this many sorted, NaN-free boundaries are searched by counting (count_row).
constexpr int64_t kCountMax = 64;

// Y[j] for the m values v of one row s (n >= 1), sorted through `sorter` when given. Each step's
// choice is arithmetic on masks, not a branch (random values would mispredict every other step).
template <class S, class T, bool Right, bool Indirect>
void search_row(const S* s, const int64_t* sorter, int64_t n, const S* v, int64_t m, int64_t* y) {
  int steps = 0;
  for (int64_t len = n; len > 0; len >>= 1) ++steps;  // each step at least halves the range
  for (int64_t j0 = 0; j0 < m; j0 += kGroup) {
    const int g = (int)(m - j0 < kGroup ? m - j0 : kGroup);
    T x[kGroup];
    int64_t start[kGroup], len[kGroup];
    for (int i = 0; i < kGroup; ++i) {
      x[i] = Conv<S, T>::load(v[j0 + (i < g ? i : 0)]);
      start[i] = 0;
      len[i] = n;
    }
    for (int k = 0; k < steps; ++k) {
#pragma GCC unroll 16
      for (int i = 0; i < kGroup; ++i) {
        const int64_t half = len[i] >> 1, live = -(int64_t)(len[i] > 0);  // all ones while searching
        const int64_t mid = (start[i] + half) & live;  // a finished search reads s[0]
        const T b = Conv<S, T>::load(s[Indirect ? sorter[mid] : mid]);
        const int64_t after = -(int64_t)(Right ? !(b > x[i]) : !(b >= x[i])) & live;
        start[i] += after & (half + 1);
        len[i] = half + (after & ((len[i] & 1) - 1));  // after: len - half - 1
      }
    }
    for (int i = 0; i < g; ++i) y[j0 + i] = start[i];
  }
}

// Whether row s (n >= 1) is ascending with no NaN (then the bisection's answer is a count).
template <class S, class T>
bool ascending(const S* s, int64_t n) {
  bool ok = Conv<S, T>::load(s[0]) == Conv<S, T>::load(s[0]);
  for (int64_t i = 1; i < n; ++i) ok &= Conv<S, T>::load(s[i - 1]) <= Conv<S, T>::load(s[i]);
  return ok;
}

// search_row's answers for an ascending NaN-free row of n <= kCountMax: the first i with s[i] >= v
// (Right: s[i] > v) is the number of s[i] < v (<= v); a NaN value goes last, as the bisection
// takes every step right for it. Each boundary against a block of values (vector compares).
template <class S, class T, bool Right>
void count_row(const S* s, int64_t n, const S* v, int64_t m, int64_t* y) {
  constexpr int64_t kBlock = 256;
  T b[kCountMax];
  for (int64_t i = 0; i < n; ++i) b[i] = Conv<S, T>::load(s[i]);
  for (int64_t j0 = 0; j0 < m; j0 += kBlock) {
    const int64_t g = m - j0 < kBlock ? m - j0 : kBlock;
    T x[kBlock];
    int32_t c[kBlock];
    for (int64_t j = 0; j < g; ++j) {
      x[j] = Conv<S, T>::load(v[j0 + j]);
      c[j] = 0;
    }
    for (int64_t i = 0; i < n; ++i) {
      const T bi = b[i];
      for (int64_t j = 0; j < g; ++j) c[j] += Right ? (int32_t)(bi <= x[j]) : (int32_t)(bi < x[j]);
    }
    for (int64_t j = 0; j < g; ++j) y[j0 + j] = x[j] == x[j] ? (int64_t)c[j] : n;
  }
}

// A sorter's entries must be indices into their row: checked before any is followed.
bool sorter_in_range(const int64_t* sorter, int64_t count, int64_t n) {
  for (int64_t i = 0; i < count; ++i)
    if ((uint64_t)sorter[i] >= (uint64_t)n) return false;
  return true;
}

template <class S, class T>
void search(const oc_ops::SearchSortedArgs& a, const oc_parallel& par) {
  const S* seq = static_cast<const S*>(a.seq);
  const S* val = static_cast<const S*>(a.values);
  const int64_t total = a.rows * a.per_row;
  if (a.n == 0) {  // every value goes at 0
    memset(a.y, 0, (size_t)total * sizeof(int64_t));
    return;
  }
  int steps = 0;
  for (int64_t len = a.n; len > 0; len >>= 1) ++steps;
  const int64_t nt = num_tasks(total, 4.0 * steps, 1 << 15, 1024);
  auto task = [&](size_t t) {
    int64_t b, e;
    split_range(total, nt, (int64_t)t, b, e);
    while (b < e) {  // the part of [b, e) in one row
      const int64_t r = b / a.per_row, row_end = (r + 1) * a.per_row;
      const int64_t stop = e < row_end ? e : row_end;
      const S* s = seq + r * a.n;
      const int64_t* so = a.sorter ? a.sorter + r * a.n : nullptr;
      if (!so && a.n <= kCountMax && ascending<S, T>(s, a.n)) {
        if (a.right) count_row<S, T, true>(s, a.n, val + b, stop - b, a.y + b);
        else count_row<S, T, false>(s, a.n, val + b, stop - b, a.y + b);
      } else if (a.right) {
        if (so) search_row<S, T, true, true>(s, so, a.n, val + b, stop - b, a.y + b);
        else search_row<S, T, true, false>(s, so, a.n, val + b, stop - b, a.y + b);
      } else {
        if (so) search_row<S, T, false, true>(s, so, a.n, val + b, stop - b, a.y + b);
        else search_row<S, T, false, false>(s, so, a.n, val + b, stop - b, a.y + b);
      }
      b = stop;
    }
  };
  parallel_for(par, (size_t)nt, task);
}

int searchsorted_cpu(oc::Context& ctx) {
  using Spec = oc_ops::SearchSortedSpec;
  oc_ops::SearchSortedArgs a;
  if (int rc = oc_ops::searchsorted_prepare(ctx, &a)) return rc;
  if (a.y == nullptr) return OC_OK;
  if (a.sorter && !sorter_in_range(a.sorter, a.rows * a.n, a.n))
    return ctx.fail(OC_INVALID_ARGUMENT, "input sorter has an index out of range [0, %lld)", (long long)a.n);
  const oc_parallel par = oc_cpu::pool(ctx);
  return oc::dispatch<Spec::types::T>(ctx, ctx.input(Spec::in::values).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, oc::half>)
      search<uint16_t, float>(a, par);  // compared in float: the same order
    else
      search<T, T>(a, par);
    return OC_OK;
  });
}

}  // namespace

OC_KERNEL_STATEFUL(searchsorted, cpu, oc_ops::SearchSortedSpec::spec, oc_ops::searchsorted_create,
                   oc_ops::searchsorted_destroy, searchsorted_cpu)
