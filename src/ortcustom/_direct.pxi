# The kernels called directly, without ONNX Runtime: for the torch.library ops, tests and
# benchmarks. NumPy arrays (host memory) run the CPU kernels on the calling thread; arrays with
# __cuda_array_interface__ (CuPy, torch CUDA tensors) run the CUDA kernels on a stream: the one
# given, else the array library's current stream, with the array's GPU made current. Same
# kernels as in a session.

import contextlib

_CUDA_DTYPES = {"<f4": 0, "<f8": 1, "<f2": 2}


cdef tuple _cuda_operand(x, str op, str name):
    """(device pointer, shape, kind) of a C-contiguous float array on the GPU."""
    cai = x.__cuda_array_interface__
    kind = _CUDA_DTYPES.get(cai["typestr"])
    if kind is None:
        raise TypeError(f"{op}: {name} has type {cai['typestr']}; accepts float32, float64, float16")
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if strides is not None:
        item = (4, 8, 2)[kind]
        expect, acc = [], item
        for d in reversed(shape):
            expect.append(acc)
            acc *= d
        if tuple(reversed(expect)) != tuple(strides) and 0 not in shape:
            raise ValueError(f"{op}: {name} must be C-contiguous")
    if name == "out" and cai["data"][1]:
        raise ValueError(f"{op}: out is read-only")
    return cai["data"][0], shape, kind


cdef void _check_overlap(str op, size_t xp, size_t yp, size_t nbytes, bint same_ok) except *:
    """out may be X itself (where `same_ok`) or apart from it, never a part of it: the kernels
    would read what they have already written."""
    if nbytes == 0 or (same_ok and xp == yp):
        return
    if xp < yp + nbytes and yp < xp + nbytes:
        raise ValueError(f"{op}: out overlaps X" + ("" if same_ok else "; give a separate array"))


cdef str _lib(a):
    """The library of a GPU array, by its type's top-level module: "cupy", "torch" or other."""
    return type(a).__module__.split(".")[0]


cdef object _device_id(a):
    """The CUDA device index of a CuPy array or torch tensor (None for other arrays)."""
    mod = _lib(a)
    if mod == "cupy":
        return a.device.id
    if mod == "torch":
        return a.device.index
    return None


cdef object _on_device(x, str op, others):
    """A context making x's GPU the current device (the kernels run on the current one); the other
    arrays must be on the same GPU."""
    dev = _device_id(x)
    for name, a in others:
        d = None if a is None else _device_id(a)
        if dev is not None and d is not None and d != dev:
            raise ValueError(f"{op}: {name} is on GPU {d}, X on GPU {dev}")
    mod = _lib(x)
    if mod == "cupy":
        import cupy
        return cupy.cuda.Device(dev)
    if mod == "torch":
        import torch
        return torch.cuda.device(x.device)
    return contextlib.nullcontext()


cdef object _cuda_out(x, out, str op):
    if out is None:
        mod = _lib(x)
        if mod == "cupy":
            import cupy
            return cupy.empty_like(x)
        if mod == "torch":
            return x.new_empty(x.shape)
        raise ValueError(f"{op}: give out= for a GPU array of type {type(x).__name__}")
    return out


cdef size_t _cuda_stream(x, stream) except? 0:
    if stream is not None:
        return <size_t>int(stream)
    mod = _lib(x)
    if mod == "cupy":
        import cupy
        return <size_t>cupy.cuda.get_current_stream().ptr
    if mod == "torch":
        import torch
        return <size_t>torch.cuda.current_stream(x.device).cuda_stream
    return 0


cdef void _cuda_check(int err, str op) except *:
    if err != 0:
        raise RuntimeError(f"{op}: CUDA kernel launch failed: {oc_cuda_error_string(err).decode()} ({err})")


cdef object _inverse_cuda(x, out, stream):
    if not ORTCUSTOM_CUDA:
        raise RuntimeError("Inverse: this ortcustom was built without CUDA")
    out = _cuda_out(x, out, "Inverse")
    xp, shape, kind = _cuda_operand(x, "Inverse", "X")
    yp, oshape, okind = _cuda_operand(out, "Inverse", "out")
    if oshape != shape or okind != kind:
        raise ValueError(f"Inverse: out must match X's shape {shape} and type")
    if len(shape) < 2 or shape[len(shape) - 1] != shape[len(shape) - 2]:
        raise ValueError(f"Inverse: X has shape {shape}; expected (..., N, N)")
    cdef int64_t n = shape[len(shape) - 1], size = 1
    for d in shape:
        size *= d
    _check_overlap("Inverse", xp, yp, size * (4, 8, 2)[kind], False)
    if size == 0:
        return out
    cdef void* s = <void*>_cuda_stream(x, stream)
    cdef const void* xv = <const void*><size_t>xp
    cdef void* yv = <void*><size_t>yp
    if kind == 0:
        _cuda_check(oc_cuda_inverse_f32(<const float*>xv, <float*>yv, size // (n * n), n, s), "Inverse")
    elif kind == 1:
        _cuda_check(oc_cuda_inverse_f64(<const double*>xv, <double*>yv, size // (n * n), n, s), "Inverse")
    else:
        _inverse_cuda_f16(x, xv, yv, size // (n * n), n, s)
    return out


cdef void _inverse_cuda_f16(x, const void* xv, void* yv, int64_t batch, int64_t n, void* s) except *:
    cdef size_t ws_bytes = oc_cuda_inverse_f16_workspace_bytes(batch, n)
    if ws_bytes == 0:
        _cuda_check(oc_cuda_inverse_f16(<const uint16_t*>xv, <uint16_t*>yv, batch, n, s), "Inverse")
        return
    # too large for shared memory: a float working copy in a workspace from X's own library, tied
    # to the stream we run on, so that its pool hands the memory out again only in that order
    mod = _lib(x)
    if mod == "cupy":
        import cupy
        if <size_t>s == <size_t>cupy.cuda.get_current_stream().ptr:
            ws = cupy.empty(ws_bytes, dtype=cupy.uint8)
        else:
            with cupy.cuda.ExternalStream(<size_t>s):  # CuPy's pool keeps free lists per stream
                ws = cupy.empty(ws_bytes, dtype=cupy.uint8)
        wp = ws.data.ptr
    elif mod == "torch":
        import torch
        ws = torch.empty(ws_bytes, dtype=torch.uint8, device=x.device)
        if <size_t>s != <size_t>torch.cuda.current_stream(x.device).cuda_stream:
            ws.record_stream(torch.cuda.ExternalStream(<size_t>s, device=x.device))
        wp = ws.data_ptr()
    else:
        raise ValueError(f"Inverse: float16 with N = {n} needs a device workspace; give CuPy or torch arrays")
    _cuda_check(oc_cuda_inverse_f16_ws(<const uint16_t*>xv, <uint16_t*>yv, batch, n, <void*><size_t>wp,
                                       ws_bytes, s), "Inverse")


cdef object _group_norm_cuda(x, int64_t groups, scale, bias, double epsilon, out, stream):
    if not ORTCUSTOM_CUDA:
        raise RuntimeError("GroupNorm: this ortcustom was built without CUDA")
    out = _cuda_out(x, out, "GroupNorm")
    xp, shape, kind = _cuda_operand(x, "GroupNorm", "X")
    yp, oshape, okind = _cuda_operand(out, "GroupNorm", "out")
    if oshape != shape or okind != kind:
        raise ValueError(f"GroupNorm: out must match X's shape {shape} and type")
    if len(shape) < 2:
        raise ValueError(f"GroupNorm: X has shape {shape}; expected (N, C, ...)")
    cdef int64_t N = shape[0], C = shape[1], S = 1
    for d in shape[2:]:
        S *= d
    if groups <= 0 or C % groups:
        raise ValueError(f"GroupNorm: num_groups must be positive and divide the {C} channels, got {groups}")
    if epsilon < 0:
        raise ValueError(f"GroupNorm: epsilon must be >= 0, got {epsilon}")
    ptrs = []
    for name, p in (("scale", scale), ("bias", bias)):
        if p is None:
            ptrs.append(0)
            continue
        pp, pshape, pkind = _cuda_operand(p, "GroupNorm", name)
        if pshape != (C,) or pkind != kind:
            raise ValueError(f"GroupNorm: {name} must have shape ({C},) and X's type")
        ptrs.append(pp)
    if N * C * S == 0:
        return out
    _check_overlap("GroupNorm", xp, yp, N * C * S * (4, 8, 2)[kind], True)
    cdef void* s = <void*>_cuda_stream(x, stream)
    cdef const void* xv = <const void*><size_t>xp
    cdef const void* sv = <const void*><size_t>ptrs[0]
    cdef const void* bv = <const void*><size_t>ptrs[1]
    cdef void* yv = <void*><size_t>yp
    if kind == 0:
        err = oc_cuda_group_norm_f32(<const float*>xv, <const float*>sv, <const float*>bv, <float*>yv, N, C, S, groups, epsilon, s)
    elif kind == 1:
        err = oc_cuda_group_norm_f64(<const double*>xv, <const double*>sv, <const double*>bv, <double*>yv, N, C, S, groups, epsilon, s)
    else:
        err = oc_cuda_group_norm_f16(<const uint16_t*>xv, <const uint16_t*>sv, <const uint16_t*>bv, <uint16_t*>yv, N, C, S, groups, epsilon, s)
    _cuda_check(err, "GroupNorm")
    return out

cdef object _prepare(x, out, str op):
    x = np.ascontiguousarray(x)
    if x.dtype not in (np.float32, np.float64, np.float16):
        raise TypeError(f"{op}: X has dtype {x.dtype}; accepts float32, float64, float16")
    if out is None:
        out = np.empty_like(x)
    elif not (isinstance(out, np.ndarray) and out.dtype == x.dtype and out.shape == x.shape
              and out.flags.c_contiguous and out.flags.writeable):
        raise ValueError(f"{op}: out must be a writeable C-contiguous {x.dtype} array of shape {x.shape}")
    _check_overlap(op, x.__array_interface__["data"][0], out.__array_interface__["data"][0], x.nbytes, True)
    return x, out


def inverse(x, out=None, stream=None):
    """Inverse of each (..., N, N) matrix of `x` (float32/64/16), into `out` if given. `x` on a
    GPU (CuPy, torch): the CUDA kernel, on `stream` (default: the library's current stream)."""
    if hasattr(x, "__cuda_array_interface__"):
        with _on_device(x, "Inverse", (("out", out),)):
            return _inverse_cuda(x, out, stream)
    x, out = _prepare(x, out, "Inverse")
    if x.ndim < 2 or x.shape[x.ndim - 1] != x.shape[x.ndim - 2]:
        raise ValueError(f"Inverse: X has shape {x.shape}; expected (..., N, N)")
    if x.size == 0:
        return out
    cdef int64_t n = x.shape[x.ndim - 1], batch = x.size // (n * n)
    cdef cnp.ndarray xa = x, oa = out
    cdef void* xp = cnp.PyArray_DATA(xa)
    cdef void* op = cnp.PyArray_DATA(oa)
    cdef int kind = 0 if x.dtype == np.float32 else (1 if x.dtype == np.float64 else 2)
    cdef int err
    with nogil:
        if kind == 0:
            err = oc_inverse_f32(<const float*>xp, <float*>op, batch, n, oc_serial)
        elif kind == 1:
            err = oc_inverse_f64(<const double*>xp, <double*>op, batch, n, oc_serial)
        else:
            err = oc_inverse_f16(<const uint16_t*>xp, <uint16_t*>op, batch, n, oc_serial)
    if err != 0:  # the only failure: OC_OUT_OF_MEMORY
        raise MemoryError(f"Inverse: out of memory for the scratch space of {n} x {n} matrices")
    return out


def group_norm(x, num_groups, scale=None, bias=None, double epsilon=1e-5, out=None, stream=None):
    """Group normalization of `x` (N, C, ...) like torch.nn.functional.group_norm, into `out` if
    given. `x` on a GPU (CuPy, torch): the CUDA kernel, on `stream` as for `inverse`."""
    if isinstance(num_groups, bool) or not isinstance(num_groups, (int, np.integer)):
        raise TypeError(f"GroupNorm: num_groups must be an int, got {num_groups!r}")
    if hasattr(x, "__cuda_array_interface__"):
        with _on_device(x, "GroupNorm", (("out", out), ("scale", scale), ("bias", bias))):
            return _group_norm_cuda(x, num_groups, scale, bias, epsilon, out, stream)
    x, out = _prepare(x, out, "GroupNorm")
    if x.ndim < 2:
        raise ValueError(f"GroupNorm: X has shape {x.shape}; expected (N, C, ...)")
    cdef int64_t N = x.shape[0], C = x.shape[1], S = x.size // (N * C) if N * C else 0
    cdef int64_t G
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
    G = num_groups
    cdef int kind = 0 if x.dtype == np.float32 else (1 if x.dtype == np.float64 else 2)
    with nogil:
        if kind == 0:
            oc_group_norm_f32(<const float*>xp, <const float*>sp, <const float*>bp, <float*>yp, N, C, S, G, epsilon, oc_serial)
        elif kind == 1:
            oc_group_norm_f64(<const double*>xp, <const double*>sp, <const double*>bp, <double*>yp, N, C, S, G, epsilon, oc_serial)
        else:
            oc_group_norm_f16(<const uint16_t*>xp, <const uint16_t*>sp, <const uint16_t*>bp, <uint16_t*>yp, N, C, S, G, epsilon, oc_serial)
    return out
