// Conversions between binary32 and binary64 for the CUDA engine's operands and results
// (ozfft/engines/cuda/engine.py, CudaEngine.astype): cupy's elementwise kernels are built
// with -ftz=true, which flushes binary32 subnormals to zero on the way in and out; ozfft's
// kernels are built without it. Widening is exact; narrowing rounds once to nearest even
// (subnormals kept, overflow to inf). Complex arrays convert as 2 n reals.

extern "C" __global__ void oz_widen_f32(const float* __restrict__ in, double* __restrict__ out,
                                        long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = (double)in[i];
}

extern "C" __global__ void oz_narrow_f64(const double* __restrict__ in, float* __restrict__ out,
                                         long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = __double2float_rn(in[i]);
}
