# Cython view of include/ortcustom/kernels.h: the C entry points of the CPU kernels.
from libc.stdint cimport int64_t, uint16_t

cdef extern from "ortcustom/kernels.h" nogil:
    ctypedef void (*oc_task_fn)(void* arg, size_t i) noexcept nogil
    ctypedef void (*oc_parallel_for_fn)(void* runner, oc_task_fn fn, size_t n, void* arg) noexcept nogil
    ctypedef struct oc_parallel:
        oc_parallel_for_fn run
        void* runner
    const oc_parallel oc_serial
    const char* oc_cpu_isa()

    int oc_inverse_f32(const float* inp, float* out, int64_t batch, int64_t n, oc_parallel par)
    int oc_inverse_f64(const double* inp, double* out, int64_t batch, int64_t n, oc_parallel par)
    int oc_inverse_f16(const uint16_t* inp, uint16_t* out, int64_t batch, int64_t n, oc_parallel par)

    void oc_group_norm_f32(const float* x, const float* scale, const float* bias, float* y,
                           int64_t N, int64_t C, int64_t S, int64_t groups, double eps, oc_parallel par)
    void oc_group_norm_f64(const double* x, const double* scale, const double* bias, double* y,
                           int64_t N, int64_t C, int64_t S, int64_t groups, double eps, oc_parallel par)
    void oc_group_norm_f16(const uint16_t* x, const uint16_t* scale, const uint16_t* bias, uint16_t* y,
                           int64_t N, int64_t C, int64_t S, int64_t groups, double eps, oc_parallel par)
