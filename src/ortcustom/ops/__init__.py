"""The built-in ops. Add one to a domain: `ortcustom.Domain("com.microsoft").add(Inverse)`."""
from .group_norm import GroupNorm
from .inverse import Inverse

ALL = (Inverse, GroupNorm)

__all__ = ["GroupNorm", "Inverse", "ALL"]
