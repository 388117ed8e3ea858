"""The asv side: one class per case group, parametrized over (case, impl), on the full-size cases
of `_common.cases()`. An implementation that cannot run here (n/a for the dtype or rank, no GPU)
raises NotImplementedError in setup, which asv reports as skipped (n/a)."""
from __future__ import annotations

from . import _common as C


def case_keys(group: str) -> list[str]:
    return [c.key for c in C.cases(quick=False, cuda=True) if c.group == group]


class _CaseBench:
    """Subclasses set `group`, `params` and `param_names`."""

    group = ""
    timeout = 300
    number = 0  # asv picks the number of runs per sample

    def setup(self, case_key, impl):
        case = next(c for c in C.cases(quick=False, cuda=True) if c.key == case_key)
        try:
            self.impl = C.make_impl(case, impl)
        except C.Unavailable as e:
            raise NotImplementedError(str(e)) from None  # asv: skipped
        C.check(case, self.impl)
        self.fn, self.sync = self.impl.fn, self.impl.sync

    def time_run(self, case_key, impl):
        self.fn()
        if self.sync:
            self.sync()

    def peakmem_run(self, case_key, impl):
        self.fn()
        if self.sync:
            self.sync()

