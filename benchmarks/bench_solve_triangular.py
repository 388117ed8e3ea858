"""asv: SolveTriangular, float32 lower-triangular A, batched 3x3/4x4/8x8, 64 and 256 (4 right-hand
sides), single 512 and 1024 (n right-hand sides): ours (ORT session) against
torch.linalg.solve_triangular; ours called directly (info)."""
from ._asv import _CaseBench, case_keys
from ._common import IMPLS


class SolveTriangular(_CaseBench):
    params = (case_keys("solve_triangular"), list(IMPLS["solve_triangular"]))
    param_names = ("case", "impl")
