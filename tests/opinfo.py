"""PyTorch's own OpInfo samples (torch.testing._internal's op_db) for an op, imported on first use:
the import takes seconds, so tests call samples() inside their body, never at collection."""
import functools


@functools.lru_cache(maxsize=None)
def _op(name: str):
    from torch.testing._internal.common_methods_invocations import op_db

    got = [o for o in op_db if o.name == name and not o.variant_test_name]
    assert got, f"PyTorch has no OpInfo {name!r}"
    return got[0]


def samples(name: str, dtype):
    """The SampleInputs of OpInfo `name` on the CPU for torch dtype `dtype`."""
    return list(_op(name).sample_inputs("cpu", dtype))
