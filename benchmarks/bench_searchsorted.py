"""asv: SearchSorted, 10^6 float32 values into 10..10^6 sorted boundaries: ours (ORT session)
against torch.searchsorted and numpy.searchsorted; ours called directly (info)."""
from ._asv import _CaseBench, case_keys
from ._common import IMPLS


class SearchSorted(_CaseBench):
    params = (case_keys("searchsorted"), list(IMPLS["searchsorted"]))
    param_names = ("case", "impl")
