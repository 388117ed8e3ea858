"""The built-in ops. Add one to a domain: `ortcustom.Domain("com.microsoft").add(Inverse)`."""
from ..registry import Domain, Op
from . import contrib
from .cholesky import Cholesky, CholeskyEx
from .eigh import Eigh, Eigvalsh
from .contrib import ContribGroupNorm, SkipGroupNorm
from .group_norm import GroupNorm
from .inverse import Inverse
from .qr import Qr
from .searchsorted import SearchSorted
from .solve import Slogdet, Solve, SolveEx
from .solve_triangular import SolveTriangular
from .svd import Svd, Svdvals

ALL = (Inverse, GroupNorm, SearchSorted, Cholesky, CholeskyEx, SolveTriangular, Solve, SolveEx, Slogdet, Svd,
       Svdvals, Qr, Eigh, Eigvalsh)  # ortcustom's own ops; ORT's contrib ops are in contrib.ALL


def library_domains():
    """What ortcustom.get_library_path()'s plain library registers (its build reads this):
    com.microsoft::Inverse (what exporters write for torch.inverse) and the `ortcustom` domain."""
    return [Domain("com.microsoft").add(Inverse), Domain("ortcustom").add(*ALL)]


# the declarations' names (a new op's import is its entry here)
__all__ = ["ALL", "contrib", *sorted(name for name, value in globals().items() if isinstance(value, Op))]
