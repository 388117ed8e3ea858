"""The built-in ops. Add one to a domain: `ortcustom.Domain("com.microsoft").add(Inverse)`."""
from . import contrib
from .cholesky import Cholesky, CholeskyEx
from .contrib import ContribGroupNorm, SkipGroupNorm
from .group_norm import GroupNorm
from .inverse import Inverse
from .searchsorted import SearchSorted
from .solve_triangular import SolveTriangular

ALL = (Inverse, GroupNorm, SearchSorted, Cholesky, CholeskyEx, SolveTriangular)  # ortcustom's own ops; ORT's contrib ops are in contrib.ALL


def library_domains():
    """What ortcustom.get_library_path()'s plain library registers (its build reads this):
    com.microsoft::Inverse (what exporters write for torch.inverse) and the `ortcustom` domain."""
    from ..registry import Domain

    return [Domain("com.microsoft").add(Inverse), Domain("ortcustom").add(*ALL)]

__all__ = ["Cholesky", "CholeskyEx", "ContribGroupNorm", "GroupNorm", "Inverse", "SearchSorted", "SkipGroupNorm", "SolveTriangular", "ALL", "contrib"]
