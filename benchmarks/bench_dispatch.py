"""asv: dispatch cost, our Inverse on 4 floats (2x2) against ORT's built-in Identity on 4 floats,
one `session.run` each."""
from ._asv import _CaseBench, case_keys
from ._common import IMPLS


class Dispatch(_CaseBench):
    params = (case_keys("dispatch"), list(IMPLS["dispatch"]))
    param_names = ("case", "impl")
