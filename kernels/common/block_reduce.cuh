// Block-wide reductions shared by the kernels (gemm/scaling.cu, gemm/guarantee.cu).
#pragma once

// Reduction of v over the block with `op` (identity `none`), through one warp shuffle
// pass, `shared` (a value per warp, at least blockDim.x / 32) and a second pass in warp 0;
// the result is valid in thread 0. Every thread of the block must call it (two barriers).
template <typename T, typename Op>
__device__ T oz_block_reduce(T v, Op op, T none, T* shared) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, off));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? shared[lane] : none;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, off));
    }
    __syncthreads();
    return v;
}
