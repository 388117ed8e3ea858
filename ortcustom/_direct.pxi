# The kernels called directly on NumPy arrays (host memory), without ONNX Runtime: for the
# torch.library ops and for benchmarks. Same kernels as in a session; runs on the calling thread.

cdef object _prepare(x, out, str op):
    x = np.ascontiguousarray(x)
    if x.dtype not in (np.float32, np.float64, np.float16):
        raise TypeError(f"{op}: X has dtype {x.dtype}; accepts float32, float64, float16")
    if out is None:
        out = np.empty_like(x)
    elif not (isinstance(out, np.ndarray) and out.dtype == x.dtype and out.shape == x.shape
              and out.flags.c_contiguous and out.flags.writeable):
        raise ValueError(f"{op}: out must be a writeable C-contiguous {x.dtype} array of shape {x.shape}")
    return x, out


def inverse(x, out=None):
    """Inverse of each (..., N, N) matrix of `x` (float32/64/16), into `out` if given."""
    x, out = _prepare(x, out, "Inverse")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"Inverse: X has shape {x.shape}; expected (..., N, N)")
    if x.size == 0:
        return out
    cdef int64_t n = x.shape[-1], batch = x.size // (n * n)
    cdef cnp.ndarray xa = x, oa = out
    cdef void* xp = cnp.PyArray_DATA(xa)
    cdef void* op = cnp.PyArray_DATA(oa)
    cdef int kind = 0 if x.dtype == np.float32 else (1 if x.dtype == np.float64 else 2)
    with nogil:
        if kind == 0:
            oc_inverse_f32(<const float*>xp, <float*>op, batch, n, oc_serial)
        elif kind == 1:
            oc_inverse_f64(<const double*>xp, <double*>op, batch, n, oc_serial)
        else:
            oc_inverse_f16(<const uint16_t*>xp, <uint16_t*>op, batch, n, oc_serial)
    return out


def group_norm(x, int num_groups, scale=None, bias=None, double epsilon=1e-5, out=None):
    """Group normalization of `x` (N, C, ...) like torch.nn.functional.group_norm, into `out` if given."""
    x, out = _prepare(x, out, "GroupNorm")
    if x.ndim < 2:
        raise ValueError(f"GroupNorm: X has shape {x.shape}; expected (N, C, ...)")
    cdef int64_t N = x.shape[0], C = x.shape[1], S = x.size // (N * C) if N * C else 0
    if num_groups <= 0 or C % num_groups:
        raise ValueError(f"GroupNorm: num_groups must be positive and divide the {C} channels, got {num_groups}")
    if epsilon < 0:
        raise ValueError(f"GroupNorm: epsilon must be >= 0, got {epsilon}")
    params = []
    for name, p in (("scale", scale), ("bias", bias)):
        if p is not None:
            p = np.ascontiguousarray(p, dtype=x.dtype)
            if p.shape != (C,):
                raise ValueError(f"GroupNorm: {name} has shape {p.shape}; expected ({C},)")
        params.append(p)
    if x.size == 0:
        return out
    cdef void* xp = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* yp = cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef void* sp = cnp.PyArray_DATA(<cnp.ndarray>params[0]) if params[0] is not None else NULL
    cdef void* bp = cnp.PyArray_DATA(<cnp.ndarray>params[1]) if params[1] is not None else NULL
    cdef int64_t G = num_groups
    cdef int kind = 0 if x.dtype == np.float32 else (1 if x.dtype == np.float64 else 2)
    with nogil:
        if kind == 0:
            oc_group_norm_f32(<const float*>xp, <const float*>sp, <const float*>bp, <float*>yp, N, C, S, G, epsilon, oc_serial)
        elif kind == 1:
            oc_group_norm_f64(<const double*>xp, <const double*>sp, <const double*>bp, <double*>yp, N, C, S, G, epsilon, oc_serial)
        else:
            oc_group_norm_f16(<const uint16_t*>xp, <const uint16_t*>sp, <const uint16_t*>bp, <uint16_t*>yp, N, C, S, G, epsilon, oc_serial)
    return out
