// SearchSorted's attribute and input checks, shared by its CPU and CUDA entries (its spec:
// ortcustom_spec.h, generated from the declaration, src/ortcustom/ops/searchsorted.py).
#ifndef ORTCUSTOM_SEARCHSORTED_OP_H
#define ORTCUSTOM_SEARCHSORTED_OP_H

#include <string.h>

#include <new>
#include <string>

#include "ortcustom_spec.h"

namespace oc_ops {

using SearchSortedSpec = ortcustom::spec::searchsorted;

// What create decides once per node: which bound to search for.
struct SearchSortedState {
  bool right;
};

// right / side / out_int32, resolved as torch.searchsorted resolves them.
inline int searchsorted_create(oc::Context& ctx, void** state) {
  using A = SearchSortedSpec::attr;
  const char* side = A::side(ctx);
  const int64_t right = A::right(ctx);
  if (strcmp(side, "") != 0 && strcmp(side, "left") != 0 && strcmp(side, "right") != 0)
    return ctx.fail(OC_INVALID_ARGUMENT, "attribute side can only be 'left' or 'right', got '%s'", side);
  if (right && strcmp(side, "left") == 0)
    return ctx.fail(OC_INVALID_ARGUMENT,
                    "attributes side and right can't be set to opposites: side='left' with right=1");
  if (A::out_int32(ctx) != 0)
    return ctx.fail(OC_INVALID_ARGUMENT,
                    "attribute out_int32=%lld is not supported: the output is int64 (cast it)",
                    (long long)A::out_int32(ctx));
  auto* s = new SearchSortedState;
  s->right = side[0] ? strcmp(side, "right") == 0 : right != 0;
  *state = s;
  return OC_OK;
}

inline void searchsorted_destroy(void* state) { delete static_cast<SearchSortedState*>(state); }

struct SearchSortedArgs {
  const void* seq;
  const void* values;
  const int64_t* sorter;  // nullptr: none
  int64_t* y;             // nullptr: nothing to compute
  int64_t rows;           // sequences (1 for a 1-D sequence)
  int64_t n;              // length of each sequence
  int64_t per_row;        // values searched in each row (all of them for a 1-D sequence)
  bool right;
};

// Checks the shapes as torch.searchsorted does and allocates Y (shaped like values).
inline int searchsorted_prepare(oc::Context& ctx, SearchSortedArgs* a) {
  using S = SearchSortedSpec;
  const oc_tensor& s = ctx.input(S::in::sorted_sequence);
  const oc_tensor& v = ctx.input(S::in::values);
  const oc_tensor& so = ctx.input(S::in::sorter);
  a->y = nullptr;
  if (s.rank < 1)
    return ctx.bad_shape(S::in::sorted_sequence, "sorted_sequence", "expected at least 1 dimension");
  if (s.rank > 1) {
    bool match = v.rank == s.rank;
    for (int32_t d = 0; match && d < s.rank - 1; ++d) match = v.shape[d] == s.shape[d];
    if (!match) {
      char vs[256];
      return ctx.bad_shape(S::in::sorted_sequence, "sorted_sequence",
                           (std::string("its leading dimensions must equal those of values, which has shape ") +
                            oc::shape_str(v, vs, sizeof vs) + " (or give a 1-D sequence)").c_str());
    }
  }
  if (so.present) {
    bool same = so.rank == s.rank;
    for (int32_t d = 0; same && d < s.rank; ++d) same = so.shape[d] == s.shape[d];
    if (!same) {
      char ss[256];
      return ctx.bad_shape(S::in::sorter, "sorter",
                           (std::string("expected the shape of sorted_sequence, ") +
                            oc::shape_str(s, ss, sizeof ss)).c_str());
    }
  }
  if (int rc = ctx.output(S::out::Y, v, &a->y)) return rc;
  if (v.size == 0) a->y = nullptr;
  a->seq = s.data;
  a->values = v.data;
  a->sorter = so.present ? static_cast<const int64_t*>(so.data) : nullptr;
  a->n = s.shape[s.rank - 1];
  a->rows = 1;
  for (int32_t d = 0; d < s.rank - 1; ++d) a->rows *= s.shape[d];
  a->per_row = s.rank == 1 ? v.size : (v.rank > 0 ? v.shape[v.rank - 1] : 1);
  a->right = ctx.state<SearchSortedState>()->right;
  return OC_OK;
}

}  // namespace oc_ops

#endif  // ORTCUSTOM_SEARCHSORTED_OP_H
