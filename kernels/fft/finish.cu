// The end of an inverse or normalized transform (ozfft/fourier/api.py), in one sweep over a
// dense complex128 array: y = conj(y) where `conj`, then y.re /= d_i and y.im /= d_i for the
// `count` divisors d_0, d_1, ... in order. Each division is IEEE float64, correctly rounded,
// exactly what numpy does for y.real /= d, y.imag /= d one divisor at a time, so the NumPy
// engine's sequence of array operations gives the same bits (ozfft/engines/base.py,
// Engine.conj_divide).

extern "C" __global__ void oz_fft_conj_divide(double2 *__restrict__ y, long long size, int conj,
                                              int count, double d0, double d1, double d2,
                                              double d3) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < size; i += stride) {
        double2 v = y[i];
        if (conj) v.y = -v.y;
        const double d[4] = {d0, d1, d2, d3};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            if (k < count) {
                v.x = v.x / d[k];
                v.y = v.y / d[k];
            }
        }
        y[i] = v;
    }
}
