"""The built-in ops. Add one to a domain: `ortcustom.Domain("com.microsoft").add(Inverse)`."""
from .inverse import Inverse

ALL = (Inverse,)

__all__ = ["Inverse", "ALL"]
