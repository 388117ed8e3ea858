// A kernel written against its generated interface (every_spec.h, from the declaration in
// tests/test_kernel_header.py): names, typed attribute accessors of every kind, a dispatch over the
// declared element types. Y = X * (k + f + strlen(s) + sum(ks) + sum(fs)) [+ class_, when given].
#include <string.h>

#include "every_spec.h"

namespace {

using Spec = spec::every;

int every(oc::Context& ctx) {
  double c = static_cast<double>(Spec::attr::k(ctx)) + Spec::attr::f(ctx);
  const char* s = Spec::attr::s(ctx);
  c += static_cast<double>(strlen(s));
  for (int64_t v : Spec::attr::ks(ctx)) c += static_cast<double>(v);
  for (float v : Spec::attr::fs(ctx)) c += v;
  const oc_tensor& k = ctx.input(Spec::in::class_);  // a C++ keyword as an input name
  if (k.present) c += static_cast<double>(*ctx.data<int64_t>(Spec::in::class_));
  const oc_tensor& x = ctx.input(Spec::in::X);
  return oc::dispatch<Spec::types::T>(ctx, x.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* y;
    if (int rc = ctx.output(Spec::out::Y, x, &y)) return rc;
    for (int64_t i = 0; i < x.size; ++i) y[i] = static_cast<T>(ctx.data<T>(Spec::in::X)[i] * c);
    return static_cast<int>(OC_OK);
  });
}

}  // namespace

OC_KERNEL(every, cpu, Spec::spec, every)
