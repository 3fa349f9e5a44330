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
        if (count > 0) {
            v.x = v.x / d0;
            v.y = v.y / d0;
        }
        if (count > 1) {
            v.x = v.x / d1;
            v.y = v.y / d1;
        }
        if (count > 2) {
            v.x = v.x / d2;
            v.y = v.y / d2;
        }
        if (count > 3) {
            v.x = v.x / d3;
            v.y = v.y / d3;
        }
        y[i] = v;
    }
}
