"""The built-in ops. Add one to a domain: `ortcustom.Domain("com.microsoft").add(Inverse)`."""
from . import contrib
from .contrib import ContribGroupNorm, SkipGroupNorm
from .group_norm import GroupNorm
from .inverse import Inverse

ALL = (Inverse, GroupNorm)  # ortcustom's own ops; ORT's contrib ops are in contrib.ALL

__all__ = ["ContribGroupNorm", "GroupNorm", "Inverse", "SkipGroupNorm", "ALL", "contrib"]
