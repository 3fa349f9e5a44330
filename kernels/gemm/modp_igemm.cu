// Stage 3 (Phase A) on CUTLASS, Hopper only: a batch of INT8 TN products
// D_l = (A_l Bt_l^T) mod p_l, each INT32 sum reduced to [0, p_l) in the epilogue and stored
// as one byte, the planes gemm/phase_b.cu reads with OZ_PLANES_U8: a quarter of the INT32
// planes' traffic (docs/perf-notes.md, "The CUTLASS Phase A with byte planes").
//
// Unlike the other sources this one is host code too: CUTLASS builds the kernel's
// parameters (TMA descriptors) on the host, so nvcc compiles it into a shared library with
// three extern "C" functions (ozfft/engines/cuda/cutlass_phase_a.py loads it with ctypes):
//   oz_modp_igemm_workspace  the device workspace bytes a problem needs,
//   oz_modp_igemm            check, initialize and launch on a stream,
//   oz_modp_igemm_status     the text of a status code.
// Kernel: CUTLASS 3 sm90a warp-specialized persistent GEMM (wgmma INT8, TMA loads with
// multicast across an OZ_MODP_CLUSTER_M x OZ_MODP_CLUSTER_N cluster, TMA stores),
// OZ_MODP_TILE_M x OZ_MODP_TILE_N x 128 tiles; its epilogue an epilogue visitor tree
// acc -> acc mod p with p and its constants broadcast per batch (no division on the device):
// two instantiations, the two-instruction remainder for k <= OZ_MODP_SHORT_K (OzFastModP) and
// the exact quotient for longer k (OzModP, by OzReduction). OZ_MODP_PINGPONG 1: two consumer
// warpgroups on alternate tiles; 0: both on one tile (cooperative). The defaults (cooperative,
// 256 x 128 tiles, 1 x 2 clusters, CUTLASS's epilogue subtile) were the fastest of the
// variants measured at k = 256, 1024 and 4096.
#include <cstdint>
#include <type_traits>

#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/kernel_hardware_info.h"

using namespace cute;

namespace {

#ifndef OZ_MODP_PINGPONG
#define OZ_MODP_PINGPONG 0
#endif
#ifndef OZ_MODP_TILE_M
#define OZ_MODP_TILE_M 256
#endif
#ifndef OZ_MODP_TILE_N
#define OZ_MODP_TILE_N 128
#endif
// the epilogue's subtile (OZ_MODP_EPI_M x OZ_MODP_EPI_N), or CUTLASS's choice where unset
#if defined(OZ_MODP_EPI_M) && defined(OZ_MODP_EPI_N)
using EpilogueTile = cute::Shape<cute::Int<OZ_MODP_EPI_M>, cute::Int<OZ_MODP_EPI_N>>;
#else
using EpilogueTile = cutlass::epilogue::collective::EpilogueTileAuto;
#endif
#ifndef OZ_MODP_CLUSTER_M
#define OZ_MODP_CLUSTER_M 1
#endif
#ifndef OZ_MODP_CLUSTER_N
#define OZ_MODP_CLUSTER_N 2
#endif
// the longest k whose sums (|v| <= 128 * 128 * k = 2**23) take OzFastModP's remainder
#define OZ_MODP_SHORT_K 512

// v mod p in [0, p) for |v| <= 2**30 and 2 <= p <= 256, by division by an invariant integer
// (Granlund and Montgomery, "Division by invariant integers using multiplication"): with
// s = ceil(log2 p) and magic = ceil(2**(31 + s) / p) < 2**32 (ModpIgemm's table), e = magic p
// - 2**(31 + s) < p, so for u < 2**31 + p, u e < 2**(31 + s) and
// q = umulhi(u, magic) >> (s - 1) = floor(u / p) exactly. u = v + lift, lift = p ceil(2**30
// / p) in [2**30, 2**30 + p) (a multiple of p, from the same division), lies in [0, 2**31 +
// p), and r = u - q p: an add, a multiply-high, a shift and a multiply-add a sum
// (docs/perf-notes.md, "The epilogue's reduction by an exact quotient").
struct OzReduction {
    unsigned neg_p, magic, shift, lift;
    CUTLASS_HOST_DEVICE OzReduction(unsigned p, unsigned magic_) : neg_p(0u - p), magic(magic_) {
#ifdef __CUDA_ARCH__
        // opaque to the compiler, which would otherwise fold q (-p) into (-q) p: a negation a sum
        asm("" : "+r"(neg_p));
        shift = 31 - __clz(p - 1);
#else
        shift = 31 - __builtin_clz(p - 1);
#endif
        lift = quotient((1u << 30) + p - 1) * p;
    }
    CUTLASS_HOST_DEVICE unsigned quotient(unsigned u) const {
#ifdef __CUDA_ARCH__
        return __umulhi(u, magic) >> shift;
#else
        return static_cast<unsigned>((static_cast<unsigned long long>(u) * magic) >> 32) >> shift;
#endif
    }
    CUTLASS_HOST_DEVICE unsigned operator()(int v) const {
        const unsigned u = static_cast<unsigned>(v) + lift;
        return u + quotient(u) * neg_p;
    }
};

template <class T>
struct OzModP {
    CUTLASS_HOST_DEVICE T operator()(T const& v, T const& p, T const& magic) const {
        const OzReduction reduce(static_cast<unsigned>(p), static_cast<unsigned>(magic));
        return static_cast<T>(reduce(v));
    }
};

// a fragment of one tile: one batch, so one modulus (the constants once a fragment)
template <class T, int N>
struct OzModP<cutlass::Array<T, N>> {
    CUTLASS_HOST_DEVICE cutlass::Array<T, N> operator()(cutlass::Array<T, N> const& v,
                                                        cutlass::Array<T, N> const& p,
                                                        cutlass::Array<T, N> const& magic) const {
        cutlass::Array<T, N> out;
        const OzReduction reduce(static_cast<unsigned>(p[0]), static_cast<unsigned>(magic[0]));
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < N; ++i) out[i] = static_cast<T>(reduce(v[i]));
        return out;
    }
};

// v mod p for sums of at most OZ_MODP_SHORT_K products (|v| <= 2**23), by direct computation
// of the remainder (Lemire, Kaser and Kurz, "Faster remainder by direct computation"): with
// c = ceil(2**32 / p) = (2**32 + e) / p (e < p) and u = v + lift, lift = p ceil(2**23 / p), so
// that 0 <= u < 2**24 + p: w = (c u) mod 2**32 and r = umulhi(w, p) = u mod p whenever
// e (u + p) < 2**32 (true for every p <= 256). w = c v + (c lift mod 2**32) in one multiply-add
// (the lift's product comes with the table), so a sum takes two instructions
// (docs/perf-notes.md, "The epilogue's remainder by direct computation").
template <class T>
struct OzFastModP {
    CUTLASS_HOST_DEVICE static unsigned remainder(T v, unsigned p, unsigned c, unsigned lift_c) {
        const unsigned w = static_cast<unsigned>(v) * c + lift_c;
#ifdef __CUDA_ARCH__
        return __umulhi(w, p);
#else
        return static_cast<unsigned>((static_cast<unsigned long long>(w) * p) >> 32);
#endif
    }
    CUTLASS_HOST_DEVICE T operator()(T const& v, T const& p, T const& c, T const& lift_c) const {
        return static_cast<T>(remainder(v, static_cast<unsigned>(p), static_cast<unsigned>(c),
                                        static_cast<unsigned>(lift_c)));
    }
};

template <class T, int N>
struct OzFastModP<cutlass::Array<T, N>> {
    CUTLASS_HOST_DEVICE cutlass::Array<T, N> operator()(cutlass::Array<T, N> const& v,
                                                        cutlass::Array<T, N> const& p,
                                                        cutlass::Array<T, N> const& c,
                                                        cutlass::Array<T, N> const& lift_c) const {
        cutlass::Array<T, N> out;
        const unsigned p0 = static_cast<unsigned>(p[0]), c0 = static_cast<unsigned>(c[0]);
        const unsigned l0 = static_cast<unsigned>(lift_c[0]);
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < N; ++i)
            out[i] = static_cast<T>(OzFastModP<T>::remainder(v[i], p0, c0, l0));
        return out;
    }
};

using ElementA = int8_t;
using ElementB = int8_t;
using ElementAcc = int32_t;
using ElementD = uint8_t;
using LayoutA = cutlass::layout::RowMajor;     // A: m x k, rows along k
using LayoutB = cutlass::layout::ColumnMajor;  // B: k x n stored as Bt's rows along k
using LayoutD = cutlass::layout::RowMajor;     // D: m x n, rows ldd bytes apart
constexpr int kAlign = 16;                     // bytes: TMA needs 16-byte strides
using TileShape = Shape<Int<OZ_MODP_TILE_M>, Int<OZ_MODP_TILE_N>, _128>;
using ClusterShape = Shape<Int<OZ_MODP_CLUSTER_M>, Int<OZ_MODP_CLUSTER_N>, _1>;
#if OZ_MODP_PINGPONG
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecialized;
#else
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecializedCooperative;
#endif

// per-batch scalars (the rows of the table, each a scalar broadcast with a batch stride of 1):
// the moduli, their division magics, and for short k the remainder's c and (c lift) mod 2**32
using ModulusStride = Stride<_0, _0, int64_t>;
using ScalarOfBatch = cutlass::epilogue::fusion::Sm90ScalarBroadcast<ElementAcc, ModulusStride>;
template <template <class> class Reduce, class... Scalars>
using ReduceEVT = cutlass::epilogue::fusion::Sm90EVT<
    cutlass::epilogue::fusion::Sm90Compute<Reduce, ElementD, ElementAcc,
                                           cutlass::FloatRoundStyle::round_toward_zero>,
    cutlass::epilogue::fusion::Sm90AccFetch, Scalars...>;
using LongEVT = ReduceEVT<OzModP, ScalarOfBatch, ScalarOfBatch>;
using ShortEVT = ReduceEVT<OzFastModP, ScalarOfBatch, ScalarOfBatch, ScalarOfBatch>;

template <class EVT>
struct ModpGemm {
    using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
        EpilogueTile, ElementAcc, ElementAcc, void, LayoutD,
        kAlign, ElementD, LayoutD, kAlign, EpilogueSchedule, EVT>::CollectiveOp;

    using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, kAlign, ElementB,
        LayoutB, kAlign, ElementAcc, TileShape, ClusterShape,
        cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
            sizeof(typename CollectiveEpilogue::SharedStorage))>,
        MainloopSchedule>::CollectiveOp;

    using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>,
                                                            CollectiveMainloop, CollectiveEpilogue>;
    using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;
};
using LongGemm = ModpGemm<LongEVT>::Gemm;
using ShortGemm = ModpGemm<ShortEVT>::Gemm;

// status codes past CUTLASS's own (cutlass::Status, 0 = success)
constexpr int kCudaErrorBase = 1000;  // 1000 + cudaError_t of the launch

template <class Gemm>
typename Gemm::Arguments make_arguments(const int8_t* a, long long lda, long long a_batch,
                                        const int8_t* bt, long long ldb, long long b_batch,
                                        uint8_t* d, long long ldd, long long d_batch,
                                        const int32_t* table, int m, int n, int k, int batches,
                                        int device) {
    using StrideA = typename Gemm::GemmKernel::StrideA;
    using StrideB = typename Gemm::GemmKernel::StrideB;
    using StrideD = typename Gemm::GemmKernel::StrideD;
    const StrideA stride_a = make_stride(static_cast<int64_t>(lda), Int<1>{},
                                         static_cast<int64_t>(a_batch));
    const StrideB stride_b = make_stride(static_cast<int64_t>(ldb), Int<1>{},
                                         static_cast<int64_t>(b_batch));
    const StrideD stride_d = make_stride(static_cast<int64_t>(ldd), Int<1>{},
                                         static_cast<int64_t>(d_batch));
    cutlass::KernelHardwareInfo hw;
    hw.device_id = device;
    hw.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(device);

    typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                  {m, n, k, batches},
                                  {a, stride_a, bt, stride_b},
                                  {{}, nullptr, stride_d, d, stride_d},
                                  hw};
    const auto row = [&](int r) { return table == nullptr ? nullptr : table + r * batches; };
    const ModulusStride per_batch{_0{}, _0{}, int64_t(1)};
    auto& tree = args.epilogue.thread;  // {AccFetch, moduli, ..., Compute}
    if constexpr (std::is_same_v<Gemm, LongGemm>) {  // the moduli and their magics
        tree.op_1.scalar_ptrs[0] = row(0);
        tree.op_1.dScalar[0] = per_batch;
        tree.op_2.scalar_ptrs[0] = row(1);
        tree.op_2.dScalar[0] = per_batch;
    } else {  // the moduli, c and (c lift) mod 2**32 (past three children: a plain tuple)
        cute::get<1>(tree).scalar_ptrs[0] = row(0);
        cute::get<1>(tree).dScalar[0] = per_batch;
        cute::get<2>(tree).scalar_ptrs[0] = row(2);
        cute::get<2>(tree).dScalar[0] = per_batch;
        cute::get<3>(tree).scalar_ptrs[0] = row(3);
        cute::get<3>(tree).dScalar[0] = per_batch;
    }
    return args;
}

template <class Gemm>
int run(const int8_t* a, long long lda, long long a_batch, const int8_t* bt, long long ldb,
        long long b_batch, uint8_t* d, long long ldd, long long d_batch, const int32_t* table,
        int m, int n, int k, int batches, void* workspace, size_t workspace_bytes, void* stream,
        int device) {
    auto args = make_arguments<Gemm>(a, lda, a_batch, bt, ldb, b_batch, d, ldd, d_batch, table,
                                     m, n, k, batches, device);
    Gemm gemm;
    cutlass::Status status = gemm.can_implement(args);
    if (status != cutlass::Status::kSuccess) return static_cast<int>(status);
    if (Gemm::get_workspace_size(args) > workspace_bytes)
        return static_cast<int>(cutlass::Status::kErrorWorkspaceNull);
    const auto s = static_cast<cudaStream_t>(stream);
    status = gemm.initialize(args, workspace, s);
    if (status != cutlass::Status::kSuccess) return static_cast<int>(status);
    status = gemm.run(s);
    const cudaError_t launched = cudaGetLastError();
    if (launched != cudaSuccess) return kCudaErrorBase + static_cast<int>(launched);
    return static_cast<int>(status);
}

}  // namespace

extern "C" {

// Device workspace bytes of a problem (0 for this kernel's tile scheduler, asked all the same).
size_t oz_modp_igemm_workspace(int m, int n, int k, int batches, int device) {
    if (k <= OZ_MODP_SHORT_K)
        return ShortGemm::get_workspace_size(make_arguments<ShortGemm>(
            nullptr, k, 0, nullptr, k, 0, nullptr, n, 0, nullptr, m, n, k, batches, device));
    return LongGemm::get_workspace_size(make_arguments<LongGemm>(
        nullptr, k, 0, nullptr, k, 0, nullptr, n, 0, nullptr, m, n, k, batches, device));
}

// D_l = (A_l Bt_l^T) mod moduli[l] for l < batches: A_l at a + l a_batch (m rows of k, lda
// apart), Bt_l at bt + l b_batch (n rows of k, ldb apart), D_l at d + l d_batch (m rows of n
// bytes, ldd apart). table: 4 rows of exactly batches int32 values each (as bits; row r at
// table + r batches): p_l, ceil(2**(31 + s) / p_l) with s = ceil(log2 p_l), ceil(2**32 / p_l)
// and its product with p_l ceil(2**23 / p_l) mod 2**32. k <= OZ_MODP_SHORT_K takes the
// two-instruction remainder, longer k the exact quotient. Needs |sums| <= 2**30 (k <=
// 2**16), 2 <= moduli <= 256, 16-byte aligned pointers and n, k, lda, ldb, ldd multiples of
// 16 (CUTLASS's check of the TMA operands). Returns 0, a cutlass::Status or 1000 + the
// launch's cudaError_t.
int oz_modp_igemm(const int8_t* a, long long lda, long long a_batch, const int8_t* bt,
                  long long ldb, long long b_batch, uint8_t* d, long long ldd, long long d_batch,
                  const int32_t* table, int m, int n, int k, int batches, void* workspace,
                  size_t workspace_bytes, void* stream, int device) {
    if (k <= OZ_MODP_SHORT_K)
        return run<ShortGemm>(a, lda, a_batch, bt, ldb, b_batch, d, ldd, d_batch, table, m, n, k,
                              batches, workspace, workspace_bytes, stream, device);
    return run<LongGemm>(a, lda, a_batch, bt, ldb, b_batch, d, ldd, d_batch, table, m, n, k,
                         batches, workspace, workspace_bytes, stream, device);
}

const char* oz_modp_igemm_status(int code) {
    if (code >= kCudaErrorBase)
        return cudaGetErrorString(static_cast<cudaError_t>(code - kCudaErrorBase));
    return cutlassGetStatusString(static_cast<cutlass::Status>(code));
}

}  // extern "C"
