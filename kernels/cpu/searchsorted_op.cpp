// SearchSorted on the CPU, as an ortcustom kernel (ortcustom/kernel.h): torch.searchsorted's
// bisection (the first i with s[i] >= v, or s[i] > v for the right side, halving [0, n)), run for
// kGroup values in lockstep with no data-dependent branch: their loads are independent, so a
// sequence larger than the caches costs one memory latency per step for the whole group, not per
// value. The same steps as torch's loop, so unsorted rows and NaNs give torch's answers.
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

// Y[j] for the m values v of one row s (n >= 1), sorted through `sorter` when given.
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
        const int64_t half = len[i] >> 1;
        const int64_t mid = len[i] > 0 ? start[i] + half : 0;  // a finished search reads s[0]
        const T b = Conv<S, T>::load(s[Indirect ? sorter[mid] : mid]);
        const bool after = (Right ? !(b > x[i]) : !(b >= x[i])) && len[i] > 0;
        start[i] = after ? start[i] + half + 1 : start[i];
        len[i] = after ? len[i] - half - 1 : half;
      }
    }
    for (int i = 0; i < g; ++i) y[j0 + i] = start[i];
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
      if (a.right) {
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
