// Batched symmetric eigensolver: Householder tridiagonalization, then on the tridiagonal matrix the
// square-root-free QL (Pal-Walker-Kahan) for the values alone, and for values and vectors implicit QL
// with Wilkinson-style shifts (n < 32) or divide and conquer (from n = 32), in double: all of it
// below n = 32, and eigvalsh's below n = 64 (float inputs too: batches of tiny float matrices are the
// main use, and double costs them little while giving LAPACK-level accuracy). Float inputs from there
// have their O(n^3) parts in float, as LAPACK's ssyevd (in_float): the reduction (float halves the
// bytes it streams and doubles the lanes), the merges' products and the back-transformation; the O(n^2)
// work on the tridiagonal matrix (the values' QL, the secular roots, deflation, the reflections' norms)
// stays in double, its iterations stopping at float's precision (as ssterf, slaed2 and slaed4).
//
// The triangle read is mirrored into a working copy (the float one: the lower triangle alone, all
// the fused reduction reads; rows padded off power-of-two strides), scaled
// by a power of two so its largest entry is in [0.5, 1) (no overflow or underflow in the norms;
// exact), and reduced to T = Q^T A Q by n - 2 reflections H = I - 2 u u^T applied from both sides
// (a rank-2 update), on the lower triangle only and in one pass over it per reflection: each row is
// brought up to date with the previous reflection's update and multiplied by the next u while in
// cache (about 4/3 n^3 flops over half the matrix, which stays in L2 up to n ~ 500; below n = 32 a
// plain product and rank-2 update on the full matrix, with less bookkeeping per step). (Panels as
// LAPACK's sytrd, the block only read within a panel and its rank-64 update as products after it,
// were slower here at n = 512: the panel's corrections are level-2 work of their own.)
//
// n < 32 with vectors: the values come from the QL iteration below (eigvalsh's root-free QL gives
// them within its bound, not in the same bits: a square root and two divisions less per rotation took
// 16384 8x8 float eigvalsh on 1 thread from 32.5 to 24.4 ms, torch 30, on AMD Zen 5). The transposed
// basis R = Q^T = H_{n-3} ... H_0 is formed from the kept u's backward (each reflection touches only
// the trailing block: 4/3 n^3 flops), row by row, so that every later update is on contiguous rows:
// the QL rotations of T's eigensystem, T = Z diag(d) Z^T, turn R into (Q Z)^T, whose rows are the
// eigenvectors (~6 n^3 flops: a sweep of rotations per eigenvalue, a couple of sweeps each: from
// n = 32 more than the divide and conquer's time, 2.4x at n = 60, float, 1 thread, AMD Zen 5).
// The rotations' lengths are plain square roots (the scaled entries keep squares far from overflow;
// hypot's care costs more than the rest of a small matrix's QL).
//
// The values alone (eigvalsh) below n = 256 come from the root-free QL on a copy of T (the rotations'
// squared cosines and sines: one square root per shift, none per rotation), stopping at float's
// precision for float inputs as ssterf; a task's matrices go in pairs, their QLs side by side
// (parallel.h's pair_unit: from 32 matrices the tasks take whole pairs). From n = 256 by the divide and
// conquer below, each eigenvector carried as its first and last entries alone (all a merge reads of
// the halves' and gives the next one): O(n^2) like the QL, but the roots and merges split into tasks
// where the QL is one chain of divisions (eigvalsh 1x512 float on 2 threads 3.42 -> 2.77 ms, on 1 6%
// less, 1x1024 21% and 8% less; a batch of 4 on 1 thread 6% faster than the paired QLs, 16x256 the same,
// 8x128 12% slower: AMD Zen 5). A matrix's values do not depend on its batch or the threads.
//
// n >= 32 with the vectors: values and vectors by Cuppen's divide and conquer (as LAPACK's stedc): T is
// torn in two by a rank-one change at its middle coupling, each half solved the same way (down to blocks of
// 24: QL rotating an identity), and the halves' eigensystems merged: deflation of tiny z entries and of
// close eigenvalues (a rotation of two rows), the secular equation's roots by a safeguarded rational
// iteration kept relative to the nearer pole, the eigenvectors from the differences d_l - lambda_j and the
// z recomputed from the roots (Gu and Eisenstat: orthogonal however close the roots), and the rows
// multiplied by them in two register-tiled products (the first half's columns and the second's: the rows'
// zero blocks skipped). Z^T's rows (T's eigenvectors) are then taken to A's by the reflections in blocks of
// 32 (compact WY: X <- X - X Y T Y^T, three products): nearly all of the ~2 n^3 + (merges') flops in
// column_major.inc's register tile. Values and vectors are ordered by the merges' values.
//
// Batches run in parallel over the host's pool; each task has its own working memory. A batch of
// fewer than 4 matrices of n >= 128 splits each matrix's work into tasks instead, all its parallel
// steps in one parallel region (team.h: no fork/join per step): the reduction's fixed row blocks
// (each sums its part of B u into its own vector, added in block order), the basis' rows, the
// rotations' column chunks; with divide and conquer, the four subtrees below its second level (each
// alone, in its own part of the working memory), then per merge above them the secular roots, the
// copies' and the products' rows; the back-transformation's blocks (their T and packed operands),
// then fixed chunks of rows, each through every block, with the values' QL (serial) a task alongside
// them; the triangle's check and copy and the output's columns. Every entry is computed by the same
// operations in the same order whatever the split: the results do not depend on the number of threads.

#ifndef OC_ISA_PASS

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <type_traits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>  // column_major.inc's masked loads (the AVX-512 pass)
#endif

#include "eigh.h"
#include "parallel.h"
#include "team.h"

namespace oc {
#define OC_ISA_PASS_FILE "eigh.cpp"
#define OC_ISA_PASS_NS eigh
#include "isa_passes.inc"  // oc::eigh_base, _avx2, _avx512
}  // namespace oc

int oc_eigh_f32(const float* a, float* w, float* v, uint8_t* status, int64_t batch, int64_t n, bool upper,
                oc_parallel par) {
  return OC_ISA_CALL(oc::eigh, run<float>, a, w, v, status, batch, n, upper, par);
}

int oc_eigh_f64(const double* a, double* w, double* v, uint8_t* status, int64_t batch, int64_t n, bool upper,
                oc_parallel par) {
  return OC_ISA_CALL(oc::eigh, run<double>, a, w, v, status, batch, n, upper, par);
}

#else  // OC_ISA_PASS: the per-instruction-set body, included inside a namespace

#include "simd.inc"
#include "pow2_scale.inc"  // pow2_factors: the scaling of a subnormal matrix
#include "column_major.inc"  // tile_kernel, pack_strip: the register-tiled product

// per-eigenvalue QL iteration cap: LAPACK's steqr allows 30; far more than a finite matrix needs
constexpr int kMaxIterations = 60;

enum : int64_t {
  kParallelN = 128,     // a matrix this large, in a batch of fewer than 4, splits its own work into tasks
  kMaxInnerTasks = 16,  // at most this many tasks per split
  kSmallN = 32,         // below this n the reduction runs on the full matrix (tridiagonalize_small)
  kRowBlock = 32,       // the reduction's fixed row blocks, each with its own partial sums
  kQuadLen = 128,       // rows of at least this many entries go four at a time in the reduction's pass
  kDC = 32,             // from this n the eigenvectors come by divide and conquer (and the values by
                        // the root-free QL up to kValuesDC)
  kLeaf = 24,           // its blocks up to this size by the QL iteration
  kValuesFloat = 64,    // from this n float inputs of eigvalsh are reduced in float (eigh's from kDC)
  kValuesDC = 256,      // from this n the values alone come by divide and conquer too
  kWY = 32,             // reflections per block of the back-transformation
  kSubDepth = 2,        // the divide's blocks at this depth (4) are solved as independent tasks
  kSubtrees = 1 << kSubDepth,
};

// Whether a float input's O(n^3) work runs in float, as LAPACK's ssyevd (the reduction; with the vectors
// the merges' products and the back-transformation): with the vectors from kDC (at n = 32..63 15-20% less
// time than in double), the values alone from kValuesFloat (below it the double reduction was 3-5% faster;
// AMD Zen 5, 1 thread).
template <class T>
static bool in_float(int64_t n, bool vectors) {
  return std::is_same<T, float>::value && n >= (vectors ? (int64_t)kDC : (int64_t)kValuesFloat);
}
static_assert(kDC >= kSmallN && kValuesFloat >= kSmallN, "the float reduction is tridiagonalize's");

// sqrt(a^2 + b^2): plain where the squares are safely in range (always, for the scaled matrix's
// values), hypot only outside.
static inline double pythag(double a, double b) {
  const double m = std::max(fabs(a), fabs(b));
  return m > 1e-150 && m < 1e150 ? sqrt(a * a + b * b) : hypot(a, b);
}

// Unaligned vectors of doubles, as wide as the pass's registers.
typedef double Vd __attribute__((vector_size(OC_VEC_BYTES), __aligned__(8)));
constexpr int64_t kLanes = OC_VEC_BYTES / 8;
// Unaligned vectors of R (double or float: the reduction's element type) and their lane count.
template <class R>
struct Uv;
template <>
struct Uv<double> {
  typedef Vd type;
  enum : int64_t { W = OC_VEC_BYTES / 8 };
};
template <>
struct Uv<float> {
  typedef float type __attribute__((vector_size(OC_VEC_BYTES), __aligned__(4)));
  enum : int64_t { W = OC_VEC_BYTES / 4 };
};

// x . y with 4 vector accumulators (a fixed order: the same bits for the same inputs).
template <class R>
static inline R dot(const R* x, const R* y, int64_t m) {
  typedef typename Uv<R>::type Vd;
  constexpr int64_t kLanes = Uv<R>::W;
  Vd s0 = {}, s1 = {}, s2 = {}, s3 = {};
  int64_t j = 0;
  for (; j + 4 * kLanes <= m; j += 4 * kLanes) {
    s0 += *(const Vd*)(x + j) * *(const Vd*)(y + j);
    s1 += *(const Vd*)(x + j + kLanes) * *(const Vd*)(y + j + kLanes);
    s2 += *(const Vd*)(x + j + 2 * kLanes) * *(const Vd*)(y + j + 2 * kLanes);
    s3 += *(const Vd*)(x + j + 3 * kLanes) * *(const Vd*)(y + j + 3 * kLanes);
  }
  for (; j + kLanes <= m; j += kLanes) s0 += *(const Vd*)(x + j) * *(const Vd*)(y + j);
  const Vd v = (s0 + s1) + (s2 + s3);
  R s = 0;
  for (int64_t l = 0; l < kLanes; ++l) s += v[l];
  for (; j < m; ++j) s += x[j] * y[j];
  return s;
}

// y += a x
static inline void axpy(double* OC_RESTRICT y, const double* OC_RESTRICT x, double a, int64_t m) {
  for (int64_t j = 0; j < m; ++j) y[j] += a * x[j];
}

// Runs f(begin, end) over [0, units) in tasks on par (one call when par is serial or the work is
// small). A unit's arithmetic never depends on the task that runs it, so the results do not
// depend on the number of threads.
template <class F>
static void in_tasks(const oc_parallel& par, int64_t units, double work_per_unit, F&& f) {
  const int64_t nt = par.run ? oc::detail::num_tasks(units, work_per_unit, 1 << 15, kMaxInnerTasks) : 1;
  if (nt <= 1) {
    f((int64_t)0, units);
    return;
  }
  auto task = [&](size_t t) {
    int64_t b, e;
    oc::detail::split_range(units, nt, (int64_t)t, b, e);
    f(b, e);
  };
  oc::detail::parallel_for(par, (size_t)nt, task);
}

struct Work {
  double *a, *r, *d, *e, *u, *p, *t, *up, *qp, *part;
  int64_t* order;
  // the reduction's gathered column dv, without the vectors two slots of the values' QL qv (QlValues:
  // 4 n each) and, with divide and conquer (dc), T's eigenvectors zt (rows), the merges' gathered rows
  // s and secular matrix g, and their vectors
  double *dv, *qv, *pk, *zt, *s, *g, *z, *dl, *zl, *z2, *zhat, *lam, *tmp;
  int64_t *idx, *keep, *gone, *kind, *gpos;
  // the values alone by divide and conquer (dcv: from kValuesDC): each
  // eigenvector's first and last entries (fl, two per row; nf the merge's new ones) and the kept rows'
  // (fk, lk), with g, the z's, idx, keep and gone as above
  bool dcv;
  double *fl, *nf, *fk, *lk;
  // in_float's inputs with divide and conquer (low): the merges' deflation and roots to float's
  // precision and, with vectors, their products in float, on the gathered rows sf and into cf (n x ldf
  // floats each)
  bool low;
  float *sf, *cf;
  // the divide and conquer's precision (its leaves' QL, deflation and secular roots): float's for low
  double dc_eps() const {
    return low ? (double)std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  }
  int64_t ld;   // the row stride of a and r
  int64_t ldf;              // the row stride of a read as floats (the float reduction's matrix)
  // Rows of 64 or more are padded to whole cache lines, and off a multiple of 512 bytes: a column chunk
  // of a power-of-two-sized matrix would otherwise fall in a few cache sets.
  static int64_t stride(int64_t n) {
    if (n < 64) return n;
    const int64_t ld = oc::detail::div_up(n, 8) * 8;
    return ld % 64 == 0 ? ld + 8 : ld;
  }
  // The same for rows of floats (a whole number of cache lines from 64, off a multiple of 512 bytes).
  static int64_t stride_f(int64_t n) {
    if (n < 64) return n;
    const int64_t ld = oc::detail::div_up(n, 16) * 16;
    return ld % 128 == 0 ? ld + 16 : ld;
  }
  static int64_t blocks(int64_t n) { return oc::detail::div_up(n, kRowBlock); }
  // The back-transformation's packed operands, all blocks (back_transform): at most 64 len + 2048
  // elements per block of kWY reflections (len: the columns it touches). They go in w.g (float) or w.s
  // and w.g (double; 2 n ld doubles, free by then) and, for small n, this many doubles more past them.
  static int64_t bt_extra(int64_t n) {
    int64_t need = 0;
    for (int64_t k1 = n - 3; k1 >= 0; k1 -= kWY) need += 64 * (n - std::max<int64_t>(0, k1 - kWY + 1) - 1) + 2048;
    return std::max<int64_t>(0, need - 2 * n * stride(n));
  }
  static size_t bytes(int64_t n, bool vectors, bool dc, bool low, bool dcv) {
    const int64_t mats = dc ? 5 : vectors ? 2 : dcv ? 2 : 1, vecs = dc ? 9 : dcv ? 15 : 0, ivecs = dc || dcv ? 5 : 0;
    return (size_t)(mats * n * stride(n) + (dc ? bt_extra(n) : 0) + (dc && low ? n * stride_f(n) : 0) + (vectors ? 8 : 16) * n + vecs * n +
                    kKC * (stride(n) + 16 * kSubtrees) + blocks(n) * n + 8) * sizeof(double) +
           (size_t)((1 + ivecs) * n) * sizeof(int64_t);
  }
  void carve(void* buf, int64_t n, bool vectors, bool dc, bool lo, bool values_dc) {
    double* x = reinterpret_cast<double*>(((uintptr_t)buf + 63) & ~(uintptr_t)63);
    ld = stride(n);
    ldf = stride_f(n);  // n * ldf floats fit in a's n * ld doubles
    a = x, x += n * ld;
    r = nullptr;
    if (vectors) r = x, x += n * ld;
    d = x, x += n;
    e = x, x += n;
    u = x, x += n;
    p = x, x += n;
    t = x, x += n;
    up = x, x += n;
    qp = x, x += n;
    dv = x, x += n;
    qv = vectors ? nullptr : x;  // eigvalsh's alone
    x += vectors ? 0 : 8 * n;
    // a block of kKC terms of a product's B, packed (pack_b): kKC (nc + 16) doubles for nc columns; the
    // divide's subtrees (divide_top) each use their own part
    pk = x, x += kKC * (ld + 16 * kSubtrees);
    part = x, x += blocks(n) * n;
    dcv = values_dc && !dc;
    if (dc) {
      zt = x, x += n * ld;
      s = x, x += n * ld;
    }
    if (dc || dcv) {
      g = x, x += n * ld;
      if (dc) x += bt_extra(n);  // (back_transform's operands run on from s through g)
      z = x, x += n;
      dl = x, x += n;
      zl = x, x += n;
      z2 = x, x += n;
      zhat = x, x += n;
      lam = x, x += n;
      tmp = x, x += 3 * n;
    }
    if (dcv) {
      fl = x, x += 2 * n;
      nf = x, x += 2 * n;
      fk = x, x += n;
      lk = x, x += n;
    }
    low = (dc || dcv) && lo;  // float inputs: the merges' precision float's (and dc's products in float)
    sf = cf = nullptr;
    if (dc && low) {
      sf = reinterpret_cast<float*>(x), cf = sf + n * ldf;
      x += n * ldf;
    }
    order = reinterpret_cast<int64_t*>(x);
    if (dc || dcv) {
      idx = order + n;
      keep = idx + n;
      gone = keep + n;
      kind = gone + n;
      gpos = kind + n;
    }
  }
};

// The reduction's matrix (w.a) as R and its row stride: doubles, or floats for in_float's inputs.
template <class R>
static inline R* mat(Work& w) {
  return reinterpret_cast<R*>(w.a);
}
template <class R>
static inline int64_t mat_ld(const Work& w) {
  return std::is_same<R, float>::value ? w.ldf : w.ld;
}

// The reduction for small n (below kSmallN), on the full matrix (its rows hold both triangles): per
// reflection a product B u by axpys on rows and a rank-2 update, with less bookkeeping per step
// than the fused pass, which pays off from a few dozen rows. Leaves what tridiagonalize does.
static void tridiagonalize_small(Work& w, int64_t n) {
  double* A = w.a;
  const int64_t ld = w.ld;
  for (int64_t k = 0; k + 2 < n; ++k) {
    const int64_t m = n - k - 1;
    double* x = A + k * ld + k + 1;  // row k past the diagonal = column k below it
    double sigma = 0;
    for (int64_t i = 1; i < m; ++i) sigma += x[i] * x[i];
    w.t[k] = sigma != 0 ? 1 : 0;
    if (sigma == 0) {  // column already reduced: H = I
      w.e[k] = x[0];
      std::fill(x, x + m, 0.0);
      continue;
    }
    const double norm = sqrt(x[0] * x[0] + sigma);
    const double alpha = x[0] > 0 ? -norm : norm;  // no cancellation in x0 - alpha
    double* u = w.u;
    for (int64_t i = 0; i < m; ++i) u[i] = x[i];
    u[0] -= alpha;
    const double f = 1.0 / sqrt(u[0] * u[0] + sigma);
    for (int64_t i = 0; i < m; ++i) u[i] *= f;
    double* B = A + (k + 1) * ld + (k + 1);
    double* q = w.p;
    std::fill(q, q + m, 0.0);
    for (int64_t i = 0; i < m; ++i) {
      const double* OC_RESTRICT bi = B + i * ld;
      double* OC_RESTRICT qq = q;
      const double ui = u[i];
      for (int64_t j = 0; j < m; ++j) qq[j] += ui * bi[j];
    }
    double K = 0;
    for (int64_t i = 0; i < m; ++i) K += u[i] * q[i];
    for (int64_t i = 0; i < m; ++i) q[i] = 2 * q[i] - 2 * K * u[i];
    for (int64_t i = 0; i < m; ++i) {
      double* OC_RESTRICT bi = B + i * ld;
      const double ui = u[i], qi = q[i];
      for (int64_t j = 0; j < m; ++j) bi[j] -= ui * q[j] + qi * u[j];
    }
    w.e[k] = alpha;
    std::copy(u, u + m, x);
  }
  for (int64_t i = 0; i < n; ++i) w.d[i] = A[i * ld + i];
  if (n >= 2) w.e[n - 2] = A[(n - 1) * ld + n - 2];
  w.e[n - 1] = 0;
}

// One row of the reduction's fused pass, over its len entries a[0 .. len) (the last one on the
// diagonal), offsets into the trailing block: brings them up to date with the pending update
// a -= up_i qp + qp_i up (when up), then, when u, adds their part of B u: returns the row's own
// (B's row times u), adds u_i a into part (the transposed part: entries left of the diagonal).
// From entry j on (fused_rows did those before it, into the row's sums s0, s1).
template <class R>
static inline R fused_row(R* OC_RESTRICT a, int64_t len, const R* up, const R* qp, R upi, R qpi, const R* u,
                          R* OC_RESTRICT part, int64_t j, typename Uv<R>::type s0, typename Uv<R>::type s1) {
  typedef typename Uv<R>::type Vr;
  constexpr int64_t L = Uv<R>::W;
  const int64_t off = len - 1;  // entries left of the diagonal
  const R ui = u ? u[off] : 0;
  // the diagonal read before the row's stores: a load overlapping the masked store of the tail below
  // waits for it to retire (no forwarding from a masked store: 8% of the pass on AMD Zen 5)
  const R diag = a[off];
  if (up && u) {
    for (; j + 2 * L <= off; j += 2 * L) {
      Vr x0 = *(const Vr*)(a + j), x1 = *(const Vr*)(a + j + L);
      x0 -= upi * *(const Vr*)(qp + j) + qpi * *(const Vr*)(up + j);
      x1 -= upi * *(const Vr*)(qp + j + L) + qpi * *(const Vr*)(up + j + L);
      *(Vr*)(a + j) = x0, *(Vr*)(a + j + L) = x1;
      s0 += x0 * *(const Vr*)(u + j), s1 += x1 * *(const Vr*)(u + j + L);
      *(Vr*)(part + j) += ui * x0, *(Vr*)(part + j + L) += ui * x1;
    }
  } else if (u) {
    for (; j + 2 * L <= off; j += 2 * L) {
      const Vr x0 = *(const Vr*)(a + j), x1 = *(const Vr*)(a + j + L);
      s0 += x0 * *(const Vr*)(u + j), s1 += x1 * *(const Vr*)(u + j + L);
      *(Vr*)(part + j) += ui * x0, *(Vr*)(part + j + L) += ui * x1;
    }
  } else {
    for (; j < off; ++j) a[j] -= upi * qp[j] + qpi * up[j];
  }
  if constexpr (std::is_same<R, float>::value) if (u) {
    // float (16 lanes with AVX-512: a row's scalar tail and an in-order sum of the lanes would cost
    // as much as its vector body): the rest but the diagonal as a last, partial vector (masked on
    // AVX-512), the lanes summed as a tree
    typedef typename Vec<R>::type V;
    const int rest = (int)(off - j);
    if (rest > 0) {
      int done = 0;
      for (; done < rest; done += (int)L) {
        const int len_v = rest - done < (int)L ? rest - done : (int)L;
        R* aj = a + j + done;
        V x = vload_part(aj, len_v);
        if (up) x -= upi * vload_part(qp + j + done, len_v) + qpi * vload_part(up + j + done, len_v);
        vstore_part(aj, x, len_v);
        s0 += (Vr)(x * vload_part(u + j + done, len_v));
        vstore_part(part + j + done, vload_part(part + j + done, len_v) + ui * x, len_v);
      }
      j = off;
    }
    V v = (V)(s0 + s1);
    R s = 0;
    if constexpr (L == 16) {
      typedef typename ::oc::detail::Simd<R, 8>::type V8;
      V8 h = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
             __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
      typedef typename ::oc::detail::Simd<R, 4>::type V4;
      V4 q = __builtin_shufflevector(h, h, 0, 1, 2, 3) + __builtin_shufflevector(h, h, 4, 5, 6, 7);
      s = (q[0] + q[2]) + (q[1] + q[3]);
    } else if constexpr (L == 8) {
      typedef typename ::oc::detail::Simd<R, 4>::type V4;
      V4 q = __builtin_shufflevector(v, v, 0, 1, 2, 3) + __builtin_shufflevector(v, v, 4, 5, 6, 7);
      s = (q[0] + q[2]) + (q[1] + q[3]);
    } else {
      for (int64_t l = 0; l < L; ++l) s += v[l];
    }
    R x = diag;
    if (up) x -= upi * qp[off] + qpi * up[off];
    a[off] = x;
    return s + x * u[off];
  }
  const Vr v = s0 + s1;
  R s = 0;
  for (int64_t l = 0; l < L; ++l) s += v[l];
  for (; j < len; ++j) {  // the tail and the diagonal
    R x = a[j];
    if (up) x -= upi * qp[j] + qpi * up[j];
    a[j] = x;
    if (u) {
      s += x * u[j];
      if (j < off) part[j] += ui * x;
    }
  }
  return s;
}

// Rows a0 (len entries) and a1 (the next row: len + 1) of the fused pass with both the update and u,
// their common entries together (one load of qp, up, u and part for both, one store of part: the
// single row's loop is bound by its loads and stores), the rest by fused_row; their sums of B u
// into r0, r1. Each row's own sum takes its terms in fused_row's order; part's entries take the two
// rows' terms as one (u_i a_i + u_i+1 a_i+1).
template <class R>
static inline void fused_rows(R* OC_RESTRICT a0, R* OC_RESTRICT a1, int64_t len, const R* up, const R* qp, R upi0,
                              R qpi0, R upi1, R qpi1, const R* u, R* OC_RESTRICT part, R& r0, R& r1) {
  typedef typename Uv<R>::type Vr;
  constexpr int64_t L = Uv<R>::W;
  const int64_t off = len - 1;
  const R ui0 = u[off], ui1 = u[off + 1];
  Vr s0 = {}, s1 = {}, t0 = {}, t1 = {};
  int64_t j = 0;
  for (; j + 2 * L <= off; j += 2 * L) {
    const Vr q0 = *(const Vr*)(qp + j), q1 = *(const Vr*)(qp + j + L);
    const Vr p0 = *(const Vr*)(up + j), p1 = *(const Vr*)(up + j + L);
    const Vr v0 = *(const Vr*)(u + j), v1 = *(const Vr*)(u + j + L);
    Vr x0 = *(const Vr*)(a0 + j), x1 = *(const Vr*)(a0 + j + L);
    Vr y0 = *(const Vr*)(a1 + j), y1 = *(const Vr*)(a1 + j + L);
    x0 -= upi0 * q0 + qpi0 * p0, x1 -= upi0 * q1 + qpi0 * p1;
    y0 -= upi1 * q0 + qpi1 * p0, y1 -= upi1 * q1 + qpi1 * p1;
    *(Vr*)(a0 + j) = x0, *(Vr*)(a0 + j + L) = x1;
    *(Vr*)(a1 + j) = y0, *(Vr*)(a1 + j + L) = y1;
    s0 += x0 * v0, s1 += x1 * v1;
    t0 += y0 * v0, t1 += y1 * v1;
    *(Vr*)(part + j) += ui0 * x0 + ui1 * y0, *(Vr*)(part + j + L) += ui0 * x1 + ui1 * y1;
  }
  r0 = fused_row(a0, len, up, qp, upi0, qpi0, u, part, j, s0, s1);
  r1 = fused_row(a1, len + 1, up, qp, upi1, qpi1, u, part, j, t0, t1);
}

// Four rows (row t: len + t entries), as fused_rows does two, for long rows: one load of qp, up, u and
// part and one store of part for four rows' entries (eigvalsh of one 512 x 512 float matrix: -7%,
// AMD Zen 5). Short rows stay in twos: their tails (masked stores of part that the next row's tail
// loads wait for) outweigh it. part's entries take the four rows' terms in row order.
template <class R>
static inline void fused_four_rows(R* const* rows, int64_t len, const R* up, const R* qp, const R* upr, const R* qpr,
                                   const R* u, R* OC_RESTRICT part, R* r) {
  typedef typename Uv<R>::type Vr;
  constexpr int64_t L = Uv<R>::W;
  constexpr int NR = 4;
  const int64_t off = len - 1;
  R* a[NR];
  R ui[NR], upi[NR], qpi[NR];  // locals: stores through a[t] could alias the arrays they come from
  for (int t = 0; t < NR; ++t) a[t] = rows[t], ui[t] = u[off + t], upi[t] = upr[t], qpi[t] = qpr[t];
  Vr s0[NR] = {}, s1[NR] = {};
  int64_t j = 0;
  for (; j + 2 * L <= off; j += 2 * L) {
    const Vr q0 = *(const Vr*)(qp + j), q1 = *(const Vr*)(qp + j + L);
    const Vr p0 = *(const Vr*)(up + j), p1 = *(const Vr*)(up + j + L);
    const Vr v0 = *(const Vr*)(u + j), v1 = *(const Vr*)(u + j + L);
    Vr w0 = {}, w1 = {};
#pragma GCC unroll 4
    for (int t = 0; t < NR; ++t) {
      Vr x0 = *(const Vr*)(a[t] + j), x1 = *(const Vr*)(a[t] + j + L);
      x0 -= upi[t] * q0 + qpi[t] * p0, x1 -= upi[t] * q1 + qpi[t] * p1;
      *(Vr*)(a[t] + j) = x0, *(Vr*)(a[t] + j + L) = x1;
      s0[t] += x0 * v0, s1[t] += x1 * v1;
      w0 += ui[t] * x0, w1 += ui[t] * x1;
    }
    *(Vr*)(part + j) += w0, *(Vr*)(part + j + L) += w1;
  }
  for (int t = 0; t < NR; ++t) r[t] = fused_row(a[t], len + t, up, qp, upi[t], qpi[t], u, part, j, s0[t], s1[t]);
}

// Reflection k from column k (rows k + 1 .., up to date; at col, cs apart): u (unit, m = n - k - 1 long) into w.u and
// into row k past the diagonal (unused by the lower triangle; zeros where H = I), e[k], t[k].
// Returns whether there is one (else the column is already reduced: H = I).
template <class R>
static bool reflection(Work& w, int64_t n, int64_t k, const R* col, int64_t cs) {
  R* A = mat<R>(w);
  const int64_t ld = mat_ld<R>(w), m = n - k - 1;
  double* u = w.u;
  for (int64_t i = 0; i < m; ++i) u[i] = col[i * cs];
  double sigma = 0;
  for (int64_t i = 1; i < m; ++i) sigma += u[i] * u[i];
  R* x = A + k * ld + k + 1;
  const bool reflect = sigma != 0;
  w.t[k] = reflect ? 1 : 0;
  if (!reflect) {
    w.e[k] = u[0];
    std::fill(x, x + m, R(0));
    return false;
  }
  const double norm = sqrt(u[0] * u[0] + sigma);
  const double alpha = u[0] > 0 ? -norm : norm;  // no cancellation in x0 - alpha
  u[0] -= alpha;
  const double f = 1.0 / sqrt(u[0] * u[0] + sigma);
  for (int64_t i = 0; i < m; ++i) u[i] *= f;
  for (int64_t i = 0; i < m; ++i) x[i] = (R)u[i];
  w.e[k] = alpha;
  return true;
}

// One pass over the trailing block's rows k + 1 .. (row i's entries k + 1 .. i), in fixed blocks of
// kRowBlock rows (tasks over blocks): each row brought up to date with the pending update (when
// pending: a -= up_i qp + qp_i up) and, when ur, q = B u (offsets into the block; each block sums
// its transposed part into its own vector, added in block order: the same bits whatever the split).
// Column k + 1 as left (rows k + 1 ..) into col, by row: the next step brings it up to date there,
// contiguous (in place, a strided pass over rows that other threads had in cache).
template <class R>
static void fused_pass(Work& w, int64_t n, int64_t k, const R* ur, bool pending, R* q, R* col,
                       const oc_parallel& par) {
  typedef typename Uv<R>::type Vr;
  R* A = mat<R>(w);
  const int64_t ld = mat_ld<R>(w), m = n - k - 1;
  const R *up = reinterpret_cast<const R*>(w.up), *qp = reinterpret_cast<const R*>(w.qp);
  const int64_t b0 = (k + 1) / kRowBlock, nb = Work::blocks(n) - b0;
  const R *upr = pending ? up + k + 1 : nullptr, *qpr = qp + k + 1;
  auto blocks = [&](int64_t c0, int64_t c1) {
    for (int64_t c = b0 + c0; c < b0 + c1; ++c) {
      const int64_t r0 = std::max(k + 1, c * kRowBlock), r1 = std::min(n, (c + 1) * kRowBlock);
      R* part = reinterpret_cast<R*>(w.part) + c * n + k + 1;
      if (ur) std::fill(part, part + (r1 - k - 1), R(0));
      int64_t i = r0;
      if (pending && ur) {  // the usual step: long rows four at a time, then two
        for (; i + 3 < r1 && i - k >= kQuadLen; i += 4) {
          R* const a[4] = {A + i * ld + k + 1, A + (i + 1) * ld + k + 1, A + (i + 2) * ld + k + 1,
                           A + (i + 3) * ld + k + 1};
          fused_four_rows(a, i - k, upr, qpr, up + i, qp + i, ur, part, q + i - k - 1);
          for (int t = 0; t < 4; ++t) col[i + t] = a[t][0];
        }
        for (; i + 1 < r1; i += 2) {
          fused_rows(A + i * ld + k + 1, A + (i + 1) * ld + k + 1, i - k, upr, qpr, up[i], qp[i], up[i + 1], qp[i + 1],
                     ur, part, q[i - k - 1], q[i - k]);
          col[i] = A[i * ld + k + 1], col[i + 1] = A[(i + 1) * ld + k + 1];
        }
      }
      for (; i < r1; ++i) {
        q[i - k - 1] = fused_row(A + i * ld + k + 1, i - k, upr, qpr, pending ? up[i] : R(0), pending ? qp[i] : R(0),
                                 ur, part, 0, Vr{}, Vr{});
        col[i] = A[i * ld + k + 1];
      }
    }
  };
  // (in double's flops: a float flop, twice the lanes, counts half)
  const double per_block = (4.0 * kRowBlock * (double)m / 2) * (sizeof(R) / 8.0) + 1;
  const int64_t nt = par.run ? oc::detail::num_tasks(nb, per_block, 1 << 15, kMaxInnerTasks) : 1;
  if (nt <= 1) {
    blocks(0, nb);
  } else {
    // block c (offset from b0) costs about its rows' lengths: boundaries at equal shares of the sum
    auto bound = [&](int64_t part) {
      if (part >= nt) return nb;
      const double want = (double)m * m * (double)part / (double)nt;
      int64_t lo = 0, hi = nb;
      while (lo < hi) {
        const int64_t mid = (lo + hi) / 2;
        const double r = (double)std::min(n, (b0 + mid) * kRowBlock) - (double)(k + 1);
        if (r * r < want)
          lo = mid + 1;
        else
          hi = mid;
      }
      return lo;
    };
    auto task = [&](size_t t) { blocks(bound((int64_t)t), bound((int64_t)t + 1)); };
    oc::detail::parallel_for(par, (size_t)nt, task);
  }
  if (!ur) return;
  // B u: each entry's own row, then the blocks below it in order
  for (int64_t c = b0; c < b0 + nb; ++c) {
    const R* part = reinterpret_cast<const R*>(w.part) + c * n + k + 1;
    const int64_t end = std::min(n, (c + 1) * kRowBlock) - k - 1;
    for (int64_t j = 0; j < end; ++j) q[j] += part[j];
  }
}

// Reduces the symmetric w.a (n x n, scaled; its lower triangle is read) to tridiagonal (d, e: e[i]
// couples i and i + 1) by reflections H_k = I - 2 u u^T, B <- H B H = B - u q^T - q u^T with
// q = 2 B u - 2 (u^T B u) u on the trailing block B (rows and columns k + 1 ..). On the lower
// triangle only, and in one pass per reflection: a row is brought up to date with the previous
// reflection's update and multiplied by u while in cache (only column k, which gives u, is updated
// ahead, in the copy of it the pass gathered). Rows go in fixed blocks of kRowBlock, each summing its transposed part of B u into its own
// vector, added in block order: tasks over blocks give the same bits whatever the split.
// Reflection k's u is left in row k of w.a past the diagonal (zeros where H = I), and w.t[k] says
// whether there was one, for form_basis.
template <class R>
static void tridiagonalize(Work& w, int64_t n, const oc_parallel& par) {
  R* A = mat<R>(w);
  const int64_t ld = mat_ld<R>(w);
  R *up = reinterpret_cast<R*>(w.up), *qp = reinterpret_cast<R*>(w.qp);  // the pending update, indexed by row
  R* col = reinterpret_cast<R*>(w.dv);  // column k as the last pass left it (gathered), indexed by row
  bool pending = false, gathered = false;
  for (int64_t k = 0; k + 2 < n; ++k) {
    const int64_t m = n - k - 1;  // the reflection acts on rows and columns k + 1 ..
    bool reflect;
    if (gathered) {  // column k (rows k ..) up to date, in col; its diagonal back in A (the column's rest is
                     // not read again)
      if (pending)
        for (int64_t i = k; i < n; ++i) col[i] -= up[i] * qp[k] + qp[i] * up[k];
      A[k * ld + k] = col[k];
      reflect = reflection<R>(w, n, k, col + k + 1, 1);
    } else {  // no pass since the column was last touched (nothing pending)
      reflect = reflection<R>(w, n, k, A + (k + 1) * ld + k, ld);
    }
    gathered = false;
    if (!reflect && !pending) continue;
    const R* u = A + k * ld + k + 1;  // reflection's u as R
    R* q = reinterpret_cast<R*>(w.p);  // B u, offsets into the block
    fused_pass(w, n, k, reflect ? u : nullptr, pending, q, col, par);
    gathered = true;
    pending = reflect;
    if (!reflect) continue;
    double K = 0;  // (in double: O(n) per reflection)
    for (int64_t i = 0; i < m; ++i) K += (double)u[i] * q[i];
    for (int64_t i = 0; i < m; ++i) {
      up[k + 1 + i] = u[i];
      qp[k + 1 + i] = (R)(2 * (double)q[i] - 2 * K * u[i]);
    }
  }
  if (pending)  // the last reflection's update, on the trailing 2 x 2
    for (int64_t i = n - 2; i < n; ++i)
      for (int64_t j = n - 2; j <= i; ++j) A[i * ld + j] -= up[i] * qp[j] + qp[i] * up[j];
  for (int64_t i = 0; i < n; ++i) w.d[i] = A[i * ld + i];
  if (n >= 2) w.e[n - 2] = A[(n - 1) * ld + n - 2];
  w.e[n - 1] = 0;
}

// Sets w.r = Q^T = H_{n-3} ... H_1 H_0 from the reflections tridiagonalize_small left in w.a (n < kDC),
// accumulated backward (X <- X H_k for k descending: X = H_{n-3} ... H_{k+1} is I outside rows and
// columns k + 2 .., so H_k touches only rows and columns k + 1 ..: 4/3 n^3 flops, not the forward 2 n^3):
// per row a dot and an axpy.
static void form_basis(Work& w, int64_t n) {
  double* R = w.r;
  const double* A = w.a;
  const int64_t ld = w.ld;
  for (int64_t i = 0; i < n; ++i) {
    std::fill(R + i * ld, R + i * ld + n, 0.0);
    R[i * ld + i] = 1.0;
  }
  for (int64_t k = n - 3; k >= 0; --k) {
    if (w.t[k] == 0) continue;
    const int64_t m = n - k - 1;
    const double* u = A + k * ld + k + 1;
    for (int64_t i = k + 1; i < n; ++i) {  // rows past k only: the others have zeros there
      double* y = R + i * ld + k + 1;
      const double g = 2 * dot(y, u, m);
      axpy(y, u, -g, m);
    }
  }
}

// Implicit QL on (d, e) (n values), rotating the rows of R (their first cols entries, ldr apart).
// Couplings below eps times their diagonal neighbours are negligible (float's for the divide and
// conquer's leaves in float, w.low). false: the iteration cap was reached.
static bool ql(double* d, double* e, int64_t n, double* R, int64_t ldr, int64_t cols,
               double eps = std::numeric_limits<double>::epsilon()) {
  for (int64_t l = 0; l < n; ++l) {
    for (int iter = 0;; ++iter) {
      int64_t m = l;
      for (; m + 1 < n; ++m)  // first negligible coupling at or past l
        if (fabs(e[m]) <= eps * (fabs(d[m]) + fabs(d[m + 1])) || fabs(e[m]) < std::numeric_limits<double>::min())
          break;
      if (m == l) break;
      if (iter == kMaxIterations) return false;
      // shift: the eigenvalue of the leading 2 x 2 block nearer d[l]
      double g = (d[l + 1] - d[l]) / (2 * e[l]);
      double r = pythag(g, 1.0);
      g = d[m] - d[l] + e[l] / (g + copysign(r, g));
      double s = 1, c = 1, p = 0;
      bool split = false;
      for (int64_t i = m - 1; i >= l; --i) {
        const double f = s * e[i], b = c * e[i];
        r = pythag(f, g);
        e[i + 1] = r;
        if (r == 0) {  // an exact zero coupling appeared: deflate there
          d[i + 1] -= p;
          e[m] = 0;
          split = true;
          break;
        }
        s = f / r;
        c = g / r;
        g = d[i + 1] - p;
        r = (d[i] - g) * s + 2 * c * b;
        p = s * r;
        d[i + 1] = g + p;
        g = c * r - b;
        double* OC_RESTRICT x = R + i * ldr;
        double* OC_RESTRICT y = x + ldr;
        for (int64_t k = 0; k < cols; ++k) {
          const double yk = y[k], xk = x[k];
          y[k] = s * xk + c * yk;
          x[k] = c * xk - s * yk;
        }
      }
      if (split) continue;
      d[l] -= p;
      e[l] = g;
      e[m] = 0;
    }
  }
  return true;
}

// The eigenvalues of a tridiagonal (d, e2: the squares of the couplings) by the square-root-free QL
// iteration of Pal, Walker and Kahan (the rotations' cosines and sines squared: no square root per
// rotation, one per shift), as LAPACK's sterf. Splits where e2[m] <= eps^2 (|d_m| + |d_m+1|)^2 (the
// test of ql on squares; eps: the precision wanted, float's for float inputs as ssterf's: fewer
// sweeps). A sweep's steps are a chain of dependent divisions; QlValues keeps one matrix's iteration
// between sweeps so that ql_values can run two matrices' sweeps side by side (two chains in flight:
// the QL of 8x8 and 64x64 tridiagonals 1.7-1.8x faster per matrix than one at a time, AMD Zen 5).

// One sweep's running state (locals of the step loop), its steps i = m - 1 down to l.
struct Sweep {
  double *d, *e2, *sd, *se;  // T, and where each step keeps the d[i], e2[i] it read
  int64_t i, m, l;
  double sigma, s, gamma, p;
  bool ok;  // every step's rr p normal and its next p finite; else the sweep is redone the careful way
};

// gamma' = c (alpha - sigma) - s gamma with c = p / rr, s = bb / rr is num / rr, and the next p =
// gamma'^2 / c is num^2 / (rr p): one division on the chain through p (rr p and num run alongside),
// not c's and then gamma'^2 / c (21 against 30 cycles a step on Zen 5).
static OC_ALWAYS_INLINE void sweep_step(Sweep& w) {
  const int64_t i = w.i;
  const double bb = w.e2[i], rr = w.p + bb, alpha = w.d[i], oldgam = w.gamma;
  w.sd[i] = alpha, w.se[i] = bb;
  if (i != w.m - 1) w.e2[i + 1] = w.s * rr;
  const double q = rr * w.p, num = w.p * (alpha - w.sigma) - bb * oldgam, pn = num * num / q;
  w.s = bb / rr;
  w.ok &= (q >= std::numeric_limits<double>::min()) & (pn <= std::numeric_limits<double>::max());
  w.gamma = num / rr;
  w.d[i + 1] = oldgam + (alpha - w.gamma);
  w.p = pn;
  w.i = i - 1;
}

// The first m >= l where T splits (e2[m] small), or n - 1: eight at a time without a branch each.
static inline int64_t next_split(const double* d, const double* e2, int64_t l, int64_t n, double eps2) {
  int64_t m = l;
  for (; m + 8 < n; m += 8) {
    bool any = false;
    for (int k = 0; k < 8; ++k) {
      const double s = fabs(d[m + k]) + fabs(d[m + k + 1]);
      any |= e2[m + k] <= eps2 * s * s;
    }
    if (any) break;
  }
  for (; m + 1 < n; ++m) {
    const double s = fabs(d[m]) + fabs(d[m + 1]);
    if (e2[m] <= eps2 * s * s) break;
  }
  return m;
}

struct QlValues {
  double *d, *e2, *sd, *se;  // T (values into d, unsorted) and the sweep's block as it was
  int64_t n, l;
  int iter;
  double eps2;
  // T from d and its couplings e, into slot's 4 n doubles
  void init(double* slot, const double* dt, const double* et, int64_t n_, double eps) {
    d = slot, e2 = slot + n_, sd = slot + 2 * n_, se = slot + 3 * n_;
    for (int64_t i = 0; i < n_; ++i) d[i] = dt[i], e2[i] = et[i] * et[i];
    n = n_, l = 0, iter = 0, eps2 = eps * eps;
  }
  // The next sweep into sw (the caller's local: its fields stay in registers): 1; 0: every value
  // found; -1: the iteration cap reached.
  OC_ALWAYS_INLINE int next(Sweep& sw) {
    for (; l < n; ++l, iter = 0) {
      const int64_t m = next_split(d, e2, l, n, eps2);
      if (m == l) continue;
      if (iter++ == kMaxIterations) return -1;
      // shift: the eigenvalue of the leading 2 x 2 block nearer d[l]
      const double rte = sqrt(e2[l]);
      double sigma = (d[l + 1] - d[l]) / (2 * rte);
      const double r = pythag(sigma, 1.0);
      sigma = d[l] - rte / (sigma + copysign(r, sigma));
      sd[m] = d[m];
      const double gamma = d[m] - sigma;
      sw = Sweep{d, e2, sd, se, m - 1, m, l, sigma, 0.0, gamma, gamma * gamma, true};
      return 1;
    }
    return 0;
  }
  // After the sweep's last step: where a step left the normal range (p tiny or huge: a zero gamma),
  // the block restored and swept as the textbook writes it (c, then gamma'^2 / c, or c's last value
  // times bb where c is 0).
  OC_ALWAYS_INLINE void finish(const Sweep& sw) {
    if (!sw.ok) {
      const int64_t m = sw.m, len = m - sw.l;
      memcpy(d + sw.l, sd + sw.l, (size_t)(len + 1) * sizeof(double));
      memcpy(e2 + sw.l, se + sw.l, (size_t)len * sizeof(double));
      double c = 1, s = 0, gamma = d[m] - sw.sigma, p = gamma * gamma;
      for (int64_t i = m - 1; i >= sw.l; --i) {
        const double bb = e2[i], rr = p + bb, oldc = c, oldgam = gamma, alpha = d[i];
        if (i != m - 1) e2[i + 1] = s * rr;
        c = p / rr;
        s = bb / rr;
        gamma = c * (alpha - sw.sigma) - s * oldgam;
        d[i + 1] = oldgam + (alpha - gamma);
        p = c == 0 ? oldc * bb : gamma * gamma / c;
      }
      e2[sw.l] = s * p;
      d[sw.l] = sw.sigma + gamma;
      return;
    }
    e2[sw.l] = sw.s * sw.p;
    d[sw.l] = sw.sigma + sw.gamma;
  }
};

// q's sweeps to the end: 0 done, -1 the iteration cap. (The sweeps' states are locals that never
// leave the function: a Sweep reached through a pointer would be reloaded after each store to T.)
static int ql_alone(QlValues& q) {
  Sweep x{};
  int r;
  while ((r = q.next(x)) == 1) {
    while (x.i >= x.l) sweep_step(x);
    q.finish(x);
  }
  return r;
}

// a's values, and b's (if not null) side by side, into ra, rb (0 done, -1 the iteration cap).
static void ql_values(QlValues& a, QlValues* b, int& ra, int& rb) {
  rb = 0;
  if (!b) {
    ra = ql_alone(a);
    return;
  }
  Sweep x{}, y{};
  ra = a.next(x), rb = b->next(y);
  while (ra == 1 && rb == 1) {
    for (int64_t k = std::min(x.i - x.l, y.i - y.l); k >= 0; --k) {
      sweep_step(x);
      sweep_step(y);
    }
    if (x.i < x.l) a.finish(x), ra = a.next(x);
    if (y.i < y.l) b->finish(y), rb = b->next(y);
  }
  // the one left: its sweep under way, then the rest alone
  if (ra == 1) {
    while (x.i >= x.l) sweep_step(x);
    a.finish(x);
    ra = ql_alone(a);
  }
  if (rb == 1) {
    while (y.i >= y.l) sweep_step(y);
    b->finish(y);
    rb = ql_alone(*b);
  }
}

// B's kc x nc block (row-major, ldb) packed a strip of MR columns at a time (strip s at bp + s kc MR,
// term t at + t MR; the last strip zero-padded): the register tile's vector operand.
template <class R>
static void pack_b(R* bp, const R* B, int64_t ldb, int64_t kc, int64_t nc) {
  enum : int64_t { MR = Tile<R>::MR };
  for (int64_t j0 = 0, s = 0; j0 < nc; j0 += MR, ++s) pack_strip(bp + s * kc * MR, B + j0, ldb, kc, std::min<int64_t>(MR, nc - j0));
}

// C[0:m, 0:nc] -= A[0:m, 0:kc] B, B packed by pack_b, all row-major (strides lda, ldc):
// column_major.inc's register tile on the transposed view (C^T -= B^T A^T: C's columns are the tile's
// MR vector rows, C's rows its kNR broadcast columns, read from A in place), a tile of rows going
// along its rows (C streamed in order). Each entry takes its terms one at a time in order: the same
// bits however C's rows are split into calls.
template <class R>
static void gemm_packed(const R* A, int64_t lda, const R* bp, int64_t kc, R* C, int64_t ldc, int64_t m, int64_t nc) {
  enum : int64_t { MR = Tile<R>::MR, W = Tile<R>::W };
  for (int64_t i0 = 0; i0 < m; i0 += kNR) {
    const int nr = (int)std::min<int64_t>(kNR, m - i0);
    const R* b = A + i0 * lda;
    for (int64_t j0 = 0, s = 0; j0 < nc; j0 += MR, ++s) {
      const int64_t mr = std::min<int64_t>(MR, nc - j0);
      R* c = C + i0 * ldc + j0;
      if (mr > W)
        tile_kernel<R, 2>(bp + s * kc * MR, MR, kc, b, lda, 1, nr, c, ldc, (int)mr);
      else
        tile_kernel<R, 1>(bp + s * kc * MR, MR, kc, b, lda, 1, nr, c, ldc, (int)mr);
    }
  }
}

// C[0:m, 0:nc] -= A[0:m, 0:k] B[0:k, 0:nc] (row-major): per block of kKC terms, B's block packed
// once into pk (kKC (nc + 16) doubles), then tasks over C's rows (whole register tiles per task).
template <class R>
static void gemm_tasks(double* pkd, const R* A, int64_t lda, const R* B, int64_t ldb, R* C, int64_t ldc, int64_t m,
                       int64_t nc, int64_t k, const oc_parallel& par) {
  if (m <= 0 || nc <= 0 || k <= 0) return;
  R* pk = reinterpret_cast<R*>(pkd);
  for (int64_t kk = 0; kk < k; kk += kKC) {
    const int64_t kc = std::min<int64_t>(kKC, k - kk);
    pack_b(pk, B + kk * ldb, ldb, kc, nc);
    const double work = 2.0 * kNR * (double)nc * (double)kc * (sizeof(R) / 8.0);  // double's flops: float's count half
    in_tasks(par, oc::detail::div_up(m, kNR), work, [&](int64_t u0, int64_t u1) {
      const int64_t i0 = u0 * kNR, i1 = std::min(m, u1 * kNR);
      gemm_packed(A + i0 * lda + kk, lda, pk, kc, C + i0 * ldc, ldc, i1 - i0, nc);
    });
  }
}

#include "secular.inc"  // secular_root: the merges' secular equation (shared with svd_bidiag_dc.inc)

// The merges' deflation (merge, merge_values): values whose rho z_j is below tol deflate as they are
// (gone); of two values closer than tol after a rotation that puts z's weight on one, the other
// (rotate(prev, j, c, s) turns their rows: x = prev's, y = j's, x <- c x + s y, y <- c y - s x). idx:
// the values' order (sorted here). Returns k: the kept in keep[0 .. k), ascending; N - k in gone.
template <class Rotate>
static int64_t deflate(double* d, double* z, int64_t* idx, int64_t* keep, int64_t* gone, int64_t N, double rho,
                       double tol, const Rotate& rotate) {
  std::sort(idx, idx + N, [&](int64_t x, int64_t y) { return d[x] < d[y] || (d[x] == d[y] && x < y); });
  int64_t k = 0, ng = 0, prev = -1;
  for (int64_t t = 0; t < N; ++t) {
    const int64_t j = idx[t];
    if (rho * fabs(z[j]) <= tol) {
      gone[ng++] = j;
      continue;
    }
    if (prev < 0) {
      prev = j;
      continue;
    }
    const double tau = pythag(z[j], z[prev]);
    const double c = z[j] / tau, s = -z[prev] / tau;
    if (fabs((d[j] - d[prev]) * c * s) <= tol) {  // rotate prev's weight onto j: prev deflates
      z[j] = tau, z[prev] = 0;
      rotate(prev, j, c, s);
      const double dp = d[prev], dj = d[j];
      d[prev] = dp * c * c + dj * s * s;
      d[j] = dp * s * s + dj * c * c;
      gone[ng++] = prev;
    } else {
      keep[k++] = prev;
    }
    prev = j;
  }
  if (prev >= 0) keep[k++] = prev;
  return k;
}

// The secular equation of the k > 1 kept values (keep: their d and z, gathered into dl, zl, z2): its
// roots into lam, G's row i left holding dl - lam_i (k entries, ld apart), and zhat, the z that has
// exactly these roots (Gu-Eisenstat), signed as zl. Tasks on par.
static void secular_solve(const double* d, const double* z, const int64_t* keep, int64_t k, double rho, double eps,
                          double* dl, double* zl, double* z2, double* G, int64_t ld, double* lam, double* zhat,
                          const oc_parallel& par) {
  double zz = 0;
  for (int64_t i = 0; i < k; ++i) {
    dl[i] = d[keep[i]], zl[i] = z[keep[i]], z2[i] = zl[i] * zl[i];
    zz += z2[i];
  }
  in_tasks(par, k, 40.0 * k, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) lam[i] = secular_root(dl, z2, k, rho, zz, i, G + i * ld, eps);
  });
  // z recomputed from the roots: zhat_i^2 = -(d_i - lambda_i) prod_{j != i} (d_i - lambda_j) / (d_i - d_j)
  // (tasks over i; each zhat_i's factors in j's order)
  in_tasks(par, k, 4.0 * k, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) zhat[i] = G[i * ld + i];
    for (int64_t j = 0; j < k; ++j) {
      const double* gj = G + j * ld;
      const double dj = dl[j];
      const auto den = [dj](auto v) { return v - dj; };
      times_ratios(zhat, gj, dl, i0, std::min(i1, j), den);
      times_ratios(zhat, gj, dl, std::max(i0, j + 1), i1, den);
    }
    for (int64_t i = i0; i < i1; ++i) zhat[i] = copysign(sqrt(std::max(-zhat[i], 0.0)), zl[i]);
  });
}

// Merges the two halves of the block [o, o + N) of T (Cuppen's divide and conquer): the halves'
// eigensystems D1, Q1 and D2, Q2 (rows of w.zt, unsorted values in w.d) with the torn coupling beta
// give T's block = diag(Q1, Q2) (D + rho z z^T) diag(Q1, Q2)^T, z the last row of Q1 over the first of
// Q2 (signed by beta), rho = 2 |beta| and z of unit length. Deflation: a tiny rho z_j leaves d_j an
// eigenvalue with its row as it is; two values closer than the tolerance (after a rotation of their
// rows putting z's weight on one) likewise. The rest (k) are the secular equation's roots; their
// vectors are made of the differences d_l - lambda_j and of the z that has exactly these roots (the
// Gu-Eisenstat/Loewner recomputation: orthogonal to working precision however close the roots),
// then multiplied into the rows: an upper product (rows of the first half and rows mixed by
// deflation) and a lower one, each a plain row-major gemm (C -= A B on zeros, A the negated vectors).
// Its working memory is that of the block [o, o + N) in each of w's arrays (and pk, kKC (N + 16) doubles),
// so that merges of disjoint blocks may run at the same time; the O(N^2) copies go in tasks over rows.
static void merge(Work& w, int64_t o, int64_t n1, int64_t N, double beta, double* pk, const oc_parallel& par) {
  // the precision of the deflation and of the secular roots: float's when the products are in float
  // (as LAPACK's slaed2 and slaed4)
  const double eps = w.dc_eps();
  const int64_t ld = w.ld;
  double* Z = w.zt + o * ld + o;
  double* d = w.d + o;
  double *z = w.z + o, *dl = w.dl + o, *zl = w.zl + o, *z2 = w.z2 + o, *zhat = w.zhat + o, *lam = w.lam + o;
  int64_t *idx = w.idx + o, *keep = w.keep + o, *gone = w.gone + o, *kind = w.kind + o, *gpos = w.gpos + o;
  in_tasks(par, N, (double)N, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j)
      if (j < n1)
        std::fill(Z + j * ld + n1, Z + j * ld + N, 0.0);
      else
        std::fill(Z + j * ld, Z + j * ld + n1, 0.0);
  });
  const double rho = 2 * fabs(beta), sgn = beta < 0 ? -1.0 : 1.0, h = sqrt(0.5);
  double dmax = 0, zmax = 0;
  for (int64_t j = 0; j < N; ++j) {
    z[j] = (j < n1 ? Z[j * ld + n1 - 1] : sgn * Z[j * ld + n1]) * h;
    kind[j] = j < n1 ? 0 : 2;  // 0: first half only, 1: both, 2: second half only
    idx[j] = j;
    dmax = std::max(dmax, fabs(d[j]));
    zmax = std::max(zmax, fabs(z[j]));
  }
  const double tol = 8 * eps * std::max(dmax, zmax);
  const int64_t k = deflate(d, z, idx, keep, gone, N, rho, tol, [&](int64_t prev, int64_t j, double c, double s) {
    double *x = Z + prev * ld, *y = Z + j * ld;
    for (int64_t q = 0; q < N; ++q) {
      const double xq = x[q], yq = y[q];
      x[q] = c * xq + s * yq;
      y[q] = c * yq - s * xq;
    }
    if (kind[prev] != kind[j]) kind[j] = 1;
  });
  const int64_t ng = N - k;
  double* S = w.s + o * ld + o;  // the rows gathered: the kept by kind, then the deflated
  double* G = w.g + o * ld + o;  // row j: d_l - lambda_j, then eigenvector j of D + rho z z^T
  double* A = w.r + o * ld + o;  // row j: minus eigenvector j, in the gathered rows' order (w.r is free)
  const int64_t ldf = w.ldf;
  float* Af = reinterpret_cast<float*>(w.r) + o * ldf + o;  // the same in float (w.low), w.ldf apart
  float *Sf = w.sf ? w.sf + o * ldf + o : nullptr, *C = w.cf ? w.cf + o * ldf + o : nullptr;
  int64_t nk[3] = {0, 0, 0};
  for (int64_t i = 0; i < k; ++i) ++nk[kind[keep[i]]];
  {
    int64_t at[3] = {0, nk[0], nk[0] + nk[1]};
    for (int64_t i = 0; i < k; ++i) gpos[at[kind[keep[i]]]++] = i;  // group position -> kept index
  }
  in_tasks(par, N, (double)N, [&](int64_t g0, int64_t g1) {
    for (int64_t g = g0; g < g1; ++g) {
      const double* x = Z + (g < k ? keep[gpos[g]] : gone[g - k]) * ld;
      if (w.low && g < k) {
        float* y = Sf + g * ldf;
        for (int64_t q = 0; q < N; ++q) y[q] = (float)x[q];
      } else {
        std::copy(x, x + N, S + g * ld);
      }
    }
  });
  double* nd = w.tmp + o;
  for (int64_t g = 0; g < ng; ++g) nd[k + g] = d[gone[g]];
  if (k == 1) {
    lam[0] = d[keep[0]] + rho * z[keep[0]] * z[keep[0]];
    if (w.low)
      Af[0] = -1;
    else
      A[0] = -1;
  } else if (k > 1) {
    secular_solve(d, z, keep, k, rho, eps, dl, zl, z2, G, ld, lam, zhat, par);
    in_tasks(par, k, 4.0 * k, [&](int64_t j0, int64_t j1) {
      for (int64_t j = j0; j < j1; ++j) {
        double* gj = G + j * ld;
        num_over(gj, zhat, k);
        const double f = -1.0 / sqrt(dot(gj, gj, k));
        if (w.low) {
          float* aj = Af + j * ldf;
          for (int64_t g = 0; g < k; ++g) aj[g] = (float)(gj[gpos[g]] * f);
        } else {
          double* aj = A + j * ld;
          for (int64_t g = 0; g < k; ++g) aj[g] = gj[gpos[g]] * f;
        }
      }
    });
  }
  for (int64_t j = 0; j < k; ++j) nd[j] = lam[j];
  std::copy(nd, nd + N, d);
  // the products: rows [0, k) of Z = -A (k x k) times the gathered rows (kinds 0 and 1 on the first
  // half's columns, kinds 1 and 2 on the second's)
  in_tasks(par, k, (double)N, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j)
      if (w.low)
        std::fill(C + j * ldf, C + j * ldf + N, 0.0f);
      else
        std::fill(Z + j * ld, Z + j * ld + N, 0.0);
  });
  if (w.low) {  // in float, into cf, then into Z's rows
    gemm_tasks(pk, (const float*)Af, ldf, (const float*)Sf, ldf, C, ldf, k, n1, nk[0] + nk[1], par);
    gemm_tasks(pk, (const float*)Af + nk[0], ldf, (const float*)Sf + nk[0] * ldf + n1, ldf, C + n1, ldf, k, N - n1,
               nk[1] + nk[2], par);
  } else {
    gemm_tasks(pk, A, ld, S, ld, Z, ld, k, n1, nk[0] + nk[1], par);
    gemm_tasks(pk, A + nk[0], ld, S + nk[0] * ld + n1, ld, Z + n1, ld, k, N - n1, nk[1] + nk[2], par);
  }
  in_tasks(par, N, (double)N, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j)
      if (j >= k)
        std::copy(S + j * ld, S + j * ld + N, Z + j * ld);
      else if (w.low)
        for (int64_t q = 0; q < N; ++q) Z[j * ld + q] = C[j * ldf + q];
  });
}

// merge for the values alone (w.dcv): each eigenvector carried as its first and last entries only
// (w.fl, two per row), all a merge needs of the halves' (z: the first half's last entries over the
// second's first) and all the next merge up needs of this one's. The same deflation and secular
// roots; the kept rows' two entries then mixed by the new vectors (two dots a root, not a product).
static void merge_values(Work& w, int64_t o, int64_t n1, int64_t N, double beta, const oc_parallel& par) {
  const double eps = w.dc_eps();
  const int64_t ld = w.ld;
  double *d = w.d + o, *f = w.fl + 2 * o, *nf = w.nf + 2 * o, *fk = w.fk + o, *lk = w.lk + o;
  double *z = w.z + o, *dl = w.dl + o, *zl = w.zl + o, *z2 = w.z2 + o, *zhat = w.zhat + o, *lam = w.lam + o;
  int64_t *idx = w.idx + o, *keep = w.keep + o, *gone = w.gone + o;
  const double rho = 2 * fabs(beta), sgn = beta < 0 ? -1.0 : 1.0, h = sqrt(0.5);
  double dmax = 0, zmax = 0;
  for (int64_t j = 0; j < N; ++j) {  // z from the entries at the tear; the block's rows keep the others
    z[j] = (j < n1 ? f[2 * j + 1] : sgn * f[2 * j]) * h;
    f[2 * j + (j < n1 ? 1 : 0)] = 0;
    idx[j] = j;
    dmax = std::max(dmax, fabs(d[j]));
    zmax = std::max(zmax, fabs(z[j]));
  }
  const double tol = 8 * eps * std::max(dmax, zmax);
  const int64_t k = deflate(d, z, idx, keep, gone, N, rho, tol, [&](int64_t prev, int64_t j, double c, double s) {
    for (int q = 0; q < 2; ++q) {
      const double xq = f[2 * prev + q], yq = f[2 * j + q];
      f[2 * prev + q] = c * xq + s * yq;
      f[2 * j + q] = c * yq - s * xq;
    }
  });
  double* nd = w.tmp + o;
  for (int64_t g = k; g < N; ++g) {
    nd[g] = d[gone[g - k]];
    nf[2 * g] = f[2 * gone[g - k]], nf[2 * g + 1] = f[2 * gone[g - k] + 1];
  }
  if (k == 1) {
    nd[0] = d[keep[0]] + rho * z[keep[0]] * z[keep[0]];
    nf[0] = f[2 * keep[0]], nf[1] = f[2 * keep[0] + 1];
  } else if (k > 1) {
    double* G = w.g + o * ld + o;  // row j: d_l - lambda_j, then eigenvector j of D + rho z z^T
    secular_solve(d, z, keep, k, rho, eps, dl, zl, z2, G, ld, lam, zhat, par);
    for (int64_t i = 0; i < k; ++i) fk[i] = f[2 * keep[i]], lk[i] = f[2 * keep[i] + 1];
    in_tasks(par, k, 4.0 * k, [&](int64_t j0, int64_t j1) {
      for (int64_t j = j0; j < j1; ++j) {
        double* gj = G + j * ld;
        num_over(gj, zhat, k);
        const double s = 1.0 / sqrt(dot(gj, gj, k));
        nd[j] = lam[j];
        nf[2 * j] = dot(gj, fk, k) * s, nf[2 * j + 1] = dot(gj, lk, k) * s;
      }
    });
  }
  std::copy(nd, nd + N, d);
  std::copy(nf, nf + 2 * N, f);
}

// The rows of X (n of them, ldx apart: T's eigenvectors) times R = Q^T = H_{n-3} ... H_0 (A's
// eigenvectors as rows), in place: X <- X H_{n-3} ... H_0 without forming R. The reflections go in
// blocks of kWY (k descending); a block's product H_k1 ... H_k0 = I - Y T Y^T (compact WY: Y's
// columns the u's, T upper triangular from their dot products) is applied as three products on the
// columns k0 + 1 .. it touches: W = X Y, W T, X -= (W T) Y^T (2 n^3 flops in all, in the register tile).
// In R (float for in_float's inputs: the u's as the float reduction left them, X rounded to
// float from src, the double rows of w.zt, when given), else in double.
// Two parallel steps: every block's T and its three products' B operands packed (tasks over blocks;
// in w.g for float, w.s and w.g for double: free by then), then tasks over fixed chunks of X's rows,
// each taking all the blocks in turn (a row's result depends on that row alone: no step per block or
// per product, and the chunk stays in cache).
template <class R>
static void back_transform(Work& w, R* X, int64_t ldx, const double* src, int64_t n, const oc_parallel& par) {
  enum : int64_t { MR = Tile<R>::MR };
  const R* ua = mat<R>(w);  // the reflections' u's, in row k past the diagonal
  const int64_t lu = mat_ld<R>(w);
  const int64_t nb = oc::detail::div_up(n - 2, kWY);  // blocks: b takes k1 = n - 3 - b kWY down to k0
  // block b's packed operands at packs + off[b]: Y (len x m, the terms in kKC blocks), T (m x m), Y^T
  // (m x len), each as pack_b lays it out (strips of MR columns, zero-padded)
  R* packs = reinterpret_cast<R*>(std::is_same<R, float>::value ? w.g : w.s);
  int64_t* off = w.idx;  // nb + 1 entries (free once the merges are done)
  auto geom = [&](int64_t b, int64_t& k1, int64_t& m, int64_t& c0, int64_t& len) {
    k1 = n - 3 - b * kWY;
    const int64_t k0 = std::max<int64_t>(0, k1 - kWY + 1);
    m = k1 - k0 + 1, c0 = k0 + 1, len = n - c0;
  };
  const int64_t strips = oc::detail::div_up(kWY, MR);
  off[0] = 0;
  for (int64_t b = 0; b < nb; ++b) {
    int64_t k1, m, c0, len;
    geom(b, k1, m, c0, len);
    off[b + 1] = off[b] + strips * MR * (len + kWY) + oc::detail::div_up(len, MR) * MR * m;
  }
  auto prepare = [&](size_t bi) {
    const int64_t b = (int64_t)bi;
    int64_t k1, m, c0, len;
    geom(b, k1, m, c0, len);
    R *py = packs + off[b], *pt = py + strips * MR * len, *pyt = pt + strips * MR * kWY;
    R Tm[kWY * kWY];
    // H(y_0) ... H(y_c) = I - Y_c T_c Y_c^T: column c of T is -2 T_{c-1} (Y_{c-1}^T y_c) over 2; the
    // dots over the u's common support (the earlier one's)
    for (int64_t c = 0; c < m; ++c) {
      const R tau = w.t[k1 - c] != 0 ? R(2) : R(0);
      R s[kWY];
      for (int64_t i = 0; i < c; ++i) {
        const int64_t ki = k1 - i, kc = k1 - c;  // ki > kc: u_ki's support (ki + 1 ..) is the common one
        s[i] = dot(ua + ki * lu + ki + 1, ua + kc * lu + ki + 1, n - ki - 1);
      }
      for (int64_t i = 0; i < c; ++i) {
        R x = 0;
        for (int64_t l = i; l < c; ++l) x += Tm[i * kWY + l] * s[l];
        Tm[i * kWY + c] = -tau * x;
      }
      Tm[c * kWY + c] = tau;
      for (int64_t i = c + 1; i < m; ++i) Tm[i * kWY + c] = 0;
    }
    pack_b(pt, (const R*)Tm, (int64_t)kWY, m, m);
    // Y (term j, column c: y_c = u_{k1 - c} on columns c0 .., zero above its support) in kKC blocks of
    // terms, each strips of MR columns, and Y^T (term c, column j) in strips of MR columns: pack_b's
    // layouts, zero-padded
    std::fill(py, pt, R(0));
    std::fill(pyt, pyt + oc::detail::div_up(len, MR) * MR * m, R(0));
    for (int64_t c = 0; c < m; ++c) {
      const int64_t k = k1 - c, start = k + 1 - c0;
      const R* u = ua + k * lu + c0;  // u[j], j in [start, len)
      for (int64_t kk = 0; kk < len; kk += kKC) {
        const int64_t kc = std::min<int64_t>(kKC, len - kk);
        R* p = py + strips * MR * kk + (c / MR) * kc * MR + c % MR;
        for (int64_t j = std::max(kk, start); j < kk + kc; ++j) p[(j - kk) * MR] = u[j];
      }
      for (int64_t j0 = start - start % MR; j0 < len; j0 += MR) {
        const int64_t j1 = std::max(j0, start), j2 = std::min(len, j0 + MR);
        std::copy(u + j1, u + j2, pyt + (j0 / MR) * m * MR + c * MR + (j1 - j0));
      }
    }
  };
  oc::detail::parallel_for(par, (size_t)nb, prepare);
  constexpr int64_t kRows = 4 * kNR;
  const int64_t chunks = oc::detail::div_up(n, kRows);
  auto apply = [&](size_t it) {
    const int64_t r0 = (int64_t)it * kRows, rows = std::min(kRows, n - r0);
    R* x = X + r0 * ldx;
    if (src)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < n; ++j) x[i * ldx + j] = (R)src[(r0 + i) * w.ld + j];
    alignas(64) R W1[kRows * 2 * kWY];  // a row: its part of X Y, then of X Y T
    R* W2 = W1 + kWY;
    for (int64_t b = 0; b < nb; ++b) {
      int64_t k1, m, c0, len;
      geom(b, k1, m, c0, len);
      const R *py = packs + off[b], *pt = py + strips * MR * len, *pyt = pt + strips * MR * kWY;
      for (int64_t i = 0; i < rows; ++i) std::fill(W1 + i * 2 * kWY, W1 + i * 2 * kWY + 2 * kWY, R(0));
      for (int64_t kk = 0; kk < len; kk += kKC)  // W1 = -X Y
        gemm_packed(x + c0 + kk, ldx, py + strips * MR * kk, std::min<int64_t>(kKC, len - kk), W1, 2 * kWY, rows, m);
      gemm_packed((const R*)W1, 2 * kWY, pt, m, W2, 2 * kWY, rows, m);  // W2 = X Y T
      gemm_packed((const R*)W2, 2 * kWY, pyt, m, x + c0, ldx, rows, len);  // X -= X Y T Y^T
    }
  };
  oc::detail::parallel_for(par, (size_t)chunks, apply);
}

// T's block [o, o + N) by divide and conquer: eigenvalues (unsorted) into w.d, eigenvectors into
// rows o .. of w.zt (columns o ..), or with w.dcv their first and last entries into w.fl's rows o ...
// Up to kLeaf, the QL iteration rotating an identity (its two columns, dcv). Touches only the block's
// part of w (and pk, kKC (N + 16) doubles).
static bool divide(Work& w, int64_t o, int64_t N, double* pk, const oc_parallel& par) {
  const int64_t ld = w.ld;
  const double eps = w.dc_eps();
  if (N <= kLeaf && w.dcv) {
    double* f = w.fl + 2 * o;
    for (int64_t j = 0; j < N; ++j) f[2 * j] = j == 0, f[2 * j + 1] = j == N - 1;
    return ql(w.d + o, w.e + o, N, f, 2, 2, eps);
  }
  if (N <= kLeaf) {
    double* Z = w.zt + o * ld + o;
    for (int64_t j = 0; j < N; ++j) {
      std::fill(Z + j * ld, Z + j * ld + N, 0.0);
      Z[j * ld + j] = 1;
    }
    return ql(w.d + o, w.e + o, N, Z, ld, N, eps);
  }
  const int64_t n1 = N / 2;
  const double beta = w.e[o + n1 - 1];
  w.d[o + n1 - 1] -= fabs(beta);
  w.d[o + n1] -= fabs(beta);
  if (!divide(w, o, n1, pk, par) || !divide(w, o + n1, N - n1, pk, par)) return false;
  if (w.dcv)
    merge_values(w, o, n1, N, beta, par);
  else
    merge(w, o, n1, N, beta, pk, par);
  return true;
}

// The divide's tree down to depth kSubDepth (or to leaves): the couplings torn (as divide does, top
// down: beta into tree[node], node 1 the root, node i's halves 2 i and 2 i + 1) and the blocks below
// (subtrees: offset, size) listed in order.
struct DivTree {
  double beta[kSubtrees];
  int64_t so[kSubtrees], sn[kSubtrees], count = 0;
};
static void tear(Work& w, int64_t o, int64_t N, int depth, int node, DivTree& t) {
  if (depth == kSubDepth || N <= kLeaf) {
    t.so[t.count] = o, t.sn[t.count] = N, ++t.count;
    return;
  }
  const int64_t n1 = N / 2;
  const double beta = w.e[o + n1 - 1];
  t.beta[node] = beta;
  w.d[o + n1 - 1] -= fabs(beta);
  w.d[o + n1] -= fabs(beta);
  tear(w, o, n1, depth + 1, 2 * node, t);
  tear(w, o + n1, N - n1, depth + 1, 2 * node + 1, t);
}
// The merges above the subtrees, bottom up (divide's order), each one's steps in tasks on par.
static void merge_up(Work& w, int64_t o, int64_t N, int depth, int node, const DivTree& t, const oc_parallel& par) {
  if (depth == kSubDepth || N <= kLeaf) return;
  const int64_t n1 = N / 2;
  merge_up(w, o, n1, depth + 1, 2 * node, t, par);
  merge_up(w, o + n1, N - n1, depth + 1, 2 * node + 1, t, par);
  if (w.dcv)
    merge_values(w, o, n1, N, t.beta[node], par);
  else
    merge(w, o, n1, N, t.beta[node], w.pk, par);
}

// divide(w, 0, n) (the same bits): one parallel step whose tasks are the subtrees below depth kSubDepth,
// each alone (the small merges' steps were too short to split), then the merges above them, each in
// tasks. false: an iteration cap was reached.
static bool divide_top(Work& w, int64_t n, const oc_parallel& par) {
  DivTree t;
  tear(w, 0, n, 0, 1, t);
  std::atomic<bool> ok{true};
  auto item = [&](size_t i) {
    const int64_t s = (int64_t)i;
    // its own part of pk: the subtree's offset plus 16 s (kKC (N + 16) doubles each)
    if (!divide(w, t.so[s], t.sn[s], w.pk + kKC * (t.so[s] + 16 * s), oc_parallel{nullptr, nullptr}))
      ok.store(false, std::memory_order_relaxed);
  };
  oc::detail::parallel_for(par, (size_t)t.count, item);
  if (!ok.load(std::memory_order_relaxed)) return false;
  merge_up(w, 0, n, 0, 1, t, par);
  return true;
}

// Column j of v (n x n, row-major) = row order[j] of rows (ldr apart), signed so that its largest
// entry as T (entries that round to equal magnitudes: the first) is positive (the signs into sign,
// n long). Tasks over groups of 16 columns (rows of T: the pass's vectors, the signs found with them,
// W x W blocks transposed in registers), each written row by row of v: whole cache lines on both sides.
template <class T, class S>
static void write_vectors(const S* rows, int64_t ldr, const int64_t* order, T* v, int64_t n, double* sign,
                          const oc_parallel& par) {
  typedef typename Vec<T>::type V;
  constexpr int64_t W = std::is_same<S, T>::value ? Vec<T>::W : 16;
  in_tasks(par, oc::detail::div_up(n, W), 4.0 * W * n, [&](int64_t g0, int64_t g1) {
    for (int64_t j0 = g0 * W; j0 < std::min(n, g1 * W); j0 += W) {
      const int64_t j1 = std::min(n, j0 + W);
      for (int64_t j = j0; j < j1; ++j) {
        const S* x = rows + order[j] * ldr;
        int64_t big = 0;
        if constexpr (std::is_same<S, T>::value) {  // the largest magnitude, then its first place
          V mx = {};
          int64_t i = 0;
          for (; i + W <= n; i += W) {
            const V y = vload<V>(x + i), ay = y < T(0) ? -y : y;
            mx = mx > ay ? mx : ay;
          }
          T top = 0;
          for (int64_t l = 0; l < W; ++l) top = std::max(top, mx[l]);
          for (; i < n; ++i) top = std::max(top, absval(x[i]));
          while (absval(x[big]) != top) ++big;
        } else {
          T top = (T)fabs(x[0]);
          for (int64_t i = 1; i < n; ++i)
            if ((T)fabs(x[i]) > top) big = i, top = (T)fabs(x[i]);
        }
        sign[j] = x[big] < 0 ? -1.0 : 1.0;
      }
      int64_t i = 0;
      if constexpr (std::is_same<S, T>::value)
        if (j1 - j0 == W)
          for (; i + W <= n; i += W) {
            V b[W];
            for (int64_t r = 0; r < W; ++r) b[r] = vload<V>(rows + order[j0 + r] * ldr + i) * (T)sign[j0 + r];
            transpose_block<V, (int)W>(b);
            for (int64_t c = 0; c < W; ++c) vstore(v + (i + c) * n + j0, b[c]);
          }
      for (; i < n; ++i)
        for (int64_t j = j0; j < j1; ++j) v[i * n + j] = (T)(sign[j] * rows[order[j] * ldr + i]);
    }
  });
}

// A's triangle checked, scaled by 2^-ex and reduced to T (w.d, w.e); false: not all finite.
template <class T>
static bool reduce(const T* a, int64_t n, bool upper, bool low, Work& w, const oc_parallel& par, int& ex) {
  // the triangle read's largest magnitude (infinite: not all finite), each row's into w.p in tasks (U: rows
  // from the diagonal, L: up to it)
  in_tasks(par, n, (double)n, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* x = upper ? a + r * n + r : a + r * n;
      double m = 0;
      for (int64_t j = 0, len = upper ? n - r : r + 1; j < len; ++j) {
        const double y = (double)x[j];
        if (!std::isfinite(y)) {
          m = HUGE_VAL;
          break;
        }
        m = std::max(m, fabs(y));
      }
      w.p[r] = m;
    }
  });
  double amax = 0;
  for (int64_t r = 0; r < n; ++r) amax = std::max(amax, w.p[r]);
  if (amax == HUGE_VAL) return false;
  ex = 0;
  if (amax > 0) frexp(amax, &ex);
  // exact, but for float entries scaled below float's normal range (a matrix spanning over 2^125); two
  // factors where 2^-ex is past double's range (a double matrix whose largest entry is subnormal)
  double f, f2;
  pow2_factors(-ex, f, f2);
  // the working copy, in tasks over its rows: the lower triangle's (i, j) (U: read at (j, i)), mirrored
  // (all of row i) in double
  in_tasks(par, n, (double)n, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      if (low) {
        float* A = mat<float>(w) + i * w.ldf;
        for (int64_t j = 0; j <= i; ++j) A[j] = (float)(f * (double)(upper ? a[j * n + i] : a[i * n + j]) * f2);
      } else {
        double* A = w.a + i * w.ld;
        for (int64_t j = 0; j <= i; ++j) A[j] = f * (double)(upper ? a[j * n + i] : a[i * n + j]) * f2;
        for (int64_t j = i + 1; j < n; ++j) A[j] = f * (double)(upper ? a[i * n + j] : a[j * n + i]) * f2;
      }
    }
  });
  if (n < kSmallN)
    tridiagonalize_small(w, n);
  else if (low)
    tridiagonalize<float>(w, n, par);
  else
    tridiagonalize<double>(w, n, par);
  return true;
}

// QL values' eps: float's for float inputs (as ssterf), double's for double
template <class T>
static double values_eps() {
  return std::is_same<T, float>::value ? (double)std::numeric_limits<float>::epsilon()
                                        : std::numeric_limits<double>::epsilon();
}

// The n values d (sorted here), ascending and scaled back by 2^ex
template <class T>
static void write_values(double* d, int64_t n, int ex, T* wout) {
  std::sort(d, d + n);
  for (int64_t j = 0; j < n; ++j) wout[j] = (T)ldexp(d[j], ex);
}

template <class T>
static uint8_t one(const T* a, T* wout, T* v, int64_t n, bool upper, Work& w, const oc_parallel& par) {
  // the reduction in float (and the back-transformation's u's with it)
  const bool low = in_float<T>(n, v != nullptr);
  int ex;
  if (!reduce(a, n, upper, low, w, par, ex)) return 0;
  const bool vectors = v != nullptr;
  int64_t* order = w.order;
  const double* rows = w.r;  // the eigenvectors, as rows, for the values w.d
  if (n < kDC && vectors) {  // values and vectors by the QL iteration, rotating R's rows
    form_basis(w, n);
    if (!ql(w.d, w.e, n, w.r, w.ld, n)) return 2;
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order, order + n, [&](int64_t x, int64_t y) { return w.d[x] < w.d[y]; });
    if (wout)
      for (int64_t j = 0; j < n; ++j) wout[j] = (T)ldexp(w.d[order[j]], ex);
  } else if (vectors) {
    // the values are the merges' own (the secular roots, as LAPACK's stedc): eigvalsh's root-free QL
    // gives them within its bound, not in the same bits (running it here too cost 19% of an eigh at
    // n = 64 and 9% at 512, float, 1 thread)
    if (!divide_top(w, n, par)) return 2;
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order, order + n, [&](int64_t x, int64_t y) { return w.d[x] < w.d[y]; });
    if (wout)
      for (int64_t j = 0; j < n; ++j) wout[j] = (T)ldexp(w.d[order[j]], ex);
    if (low) {  // the vectors' rows Z^T Q^T, in float (in w.s: free once the merges are done)
      back_transform(w, reinterpret_cast<float*>(w.s), w.ldf, w.zt, n, par);
      write_vectors(reinterpret_cast<const float*>(w.s), w.ldf, order, v, n, w.p, par);
      return 1;
    }
    back_transform(w, w.zt, w.ld, (const double*)nullptr, n, par);
    rows = w.zt;
  } else if (wout && w.dcv) {  // the values alone by divide and conquer (from kValuesDC)
    if (!divide_top(w, n, par)) return 2;
    write_values(w.d, n, ex, wout);
    return 1;
  } else if (wout) {  // the values alone: the root-free QL on a copy (as LAPACK's sterf)
    QlValues q;
    q.init(w.qv, w.d, w.e, n, values_eps<T>());
    if (ql_alone(q) < 0) return 2;
    write_values(q.d, q.n, ex, wout);
    return 1;
  }
  if (vectors) write_vectors(rows, w.ld, order, v, n, w.p, par);
  return 1;
}

// Eigvalsh of batch entries [b0, b1) two at a time: both reduced, then their QLs side by side.
template <class T>
static void values_in_pairs(const T* a, T* wout, uint8_t* status, int64_t b0, int64_t b1, int64_t n, bool upper,
                            Work& w) {
  const bool low = in_float<T>(n, false);
  for (int64_t b = b0; b < b1; b += 2) {
    QlValues q[2];
    int ex[2], r[2] = {0, 0};
    int64_t at[2];
    int live = 0;
    for (int64_t j = b; j < std::min(b + 2, b1); ++j) {
      status[j] = 0;
      if (!reduce(a + j * n * n, n, upper, low, w, oc_serial, ex[live])) continue;
      q[live].init(w.qv + 4 * n * live, w.d, w.e, n, values_eps<T>());
      at[live++] = j;
    }
    if (live == 0) continue;
    ql_values(q[0], live == 2 ? &q[1] : nullptr, r[0], r[1]);
    for (int k = 0; k < live; ++k) {
      status[at[k]] = r[k] < 0 ? 2 : 1;
      if (r[k] == 0) write_values(q[k].d, q[k].n, ex[k], wout + at[k] * n);
    }
  }
}

template <class T>
static int run(const T* a, T* wout, T* v, uint8_t* status, int64_t batch, int64_t n, bool upper,
               const oc_parallel& par) {
  const bool dc = v != nullptr && n >= kDC;
  const bool low = in_float<T>(n, v != nullptr);
  const bool vectors = v != nullptr;
  const bool dcv = !vectors && n >= kValuesDC;
  const size_t bytes = Work::bytes(n, vectors, dc, low, dcv);
  if (batch < 4 && n >= kParallelN && par.run != nullptr) {  // parallelism inside each matrix
    void* buf = malloc(bytes);
    if (!buf) return OC_OUT_OF_MEMORY;
    Work w;
    w.carve(buf, n, vectors, dc, low, dcv);
    // one parallel region for all of it (team.h): the reduction alone is n parallel steps of tens of
    // microseconds, the merges and the back-transformation hundreds more; a fork/join of the host's
    // pool per step cost a good part of them on 2 threads
    oc::detail::Team::run(par, (size_t)kMaxInnerTasks, [&](oc::detail::Team& team) {
      const oc_parallel tp = team.runner();
      for (int64_t b = 0; b < batch; ++b)
        status[b] = one<T>(a + b * n * n, wout ? wout + b * n : nullptr, v ? v + b * n * n : nullptr, n, upper, w, tp);
    });
    free(buf);
    return 0;
  }
  const double cost = (v ? 8.0 : 2.0) * (double)n * n * n + 64.0 * n;
  // values alone: values_in_pairs runs a task's matrices two at a time
  const int64_t per = oc::detail::pair_unit(batch, !vectors), units = oc::detail::div_up(batch, per);
  const int64_t nt = oc::detail::num_tasks(units, per * cost, 1 << 16, 1024);
  std::atomic<bool> failed{false};
  auto task = [&](size_t t) {
    int64_t b0, b1;
    oc::detail::split_range(units, nt, (int64_t)t, b0, b1);
    b0 *= per, b1 = std::min(batch, b1 * per);
    void* buf = malloc(bytes);
    if (!buf) {
      failed.store(true, std::memory_order_relaxed);
      return;
    }
    Work w;
    w.carve(buf, n, vectors, dc, low, dcv);
    if (!vectors && wout && !dcv)
      values_in_pairs(a, wout, status, b0, b1, n, upper, w);
    else
      for (int64_t b = b0; b < b1; ++b)
        status[b] =
            one<T>(a + b * n * n, wout ? wout + b * n : nullptr, v ? v + b * n * n : nullptr, n, upper, w, oc_serial);
    free(buf);
  };
  oc::detail::parallel_for(par, (size_t)nt, task);
  return failed.load(std::memory_order_relaxed) ? OC_OUT_OF_MEMORY : 0;
}

#endif  // OC_ISA_PASS
