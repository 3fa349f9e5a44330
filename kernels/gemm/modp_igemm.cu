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
// multicast across an OZ_MODP_CLUSTER_M x OZ_MODP_CLUSTER_N cluster),
// OZ_MODP_TILE_M x OZ_MODP_TILE_N x 128 tiles, its epilogue acc -> acc mod p with p and its
// constants per batch (no division on the device). Two instantiations: for k <=
// OZ_MODP_SHORT_K the two-instruction remainder (OzFastModP) in OzTileStore, an epilogue of
// our own that stages the whole tile in shared memory and stores it with 16-byte stores; for
// longer k the exact quotient (OzModP, by OzReduction) in an epilogue visitor tree on
// CUTLASS's TMA epilogue (OZ_MODP_TILE_STORE 0: the short kernel's too). OZ_MODP_PINGPONG 1:
// two consumer warpgroups on alternate tiles (both kernels on the TMA epilogue); 0: both on one
// tile (cooperative). The defaults (cooperative, 256 x 128 tiles, 1 x 2 clusters, CUTLASS's
// epilogue subtile) were the fastest of the variants measured at k = 256, 1024 and 4096.
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
// 1: the short-k kernel's epilogue is OzTileStore (the tile's bytes staged once in shared
// memory, 16-byte stores from the threads; cooperative schedule only); 0: CUTLASS's TMA
// epilogue over an epilogue visitor tree, subtile by subtile, as the long-k kernel's
#ifndef OZ_MODP_TILE_STORE
#define OZ_MODP_TILE_STORE 1
#endif

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
    // w = (c u) mod 2**32, u = v + lift
    CUTLASS_HOST_DEVICE static unsigned word(T v, unsigned c, unsigned lift_c) {
        return static_cast<unsigned>(v) * c + lift_c;
    }
    // floor(w q / 2**32): the remainder for q = p
    CUTLASS_HOST_DEVICE static unsigned high(unsigned w, unsigned q) {
#ifdef __CUDA_ARCH__
        return __umulhi(w, q);
#else
        return static_cast<unsigned>((static_cast<unsigned long long>(w) * q) >> 32);
#endif
    }
    CUTLASS_HOST_DEVICE static unsigned remainder(T v, unsigned p, unsigned c, unsigned lift_c) {
        return high(word(v, c, lift_c), p);
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

// One batch's reduction v -> v mod p for short k (OzFastModP's remainder), its modulus's
// constants read from ModpIgemm's table (row r of `batches` values at table + r batches).
struct OzShortReduction {
    unsigned p, c, lift_c;
    CUTLASS_DEVICE OzShortReduction(const int32_t* table, int batches, int l)
        : p(static_cast<unsigned>(__ldg(table + l))),
          c(static_cast<unsigned>(__ldg(table + 2 * batches + l))),
          lift_c(static_cast<unsigned>(__ldg(table + 3 * batches + l))) {}
    CUTLASS_DEVICE unsigned operator()(int v) const {
        return OzFastModP<int>::remainder(v, p, c, lift_c);
    }
    // (v0 mod p) | (v1 mod p) << 8: with w1 = c u1 mod 2**32, umulhi(w1, 256 p) = 256 floor(w1
    // p / 2**32) + (a byte), so the shift comes with the multiply and the mask with the OR
    CUTLASS_DEVICE unsigned pair(int v0, int v1) const {
        using Fast = OzFastModP<int>;
        return (Fast::high(Fast::word(v1, c, lift_c), p << 8) & 0xff00u) | (*this)(v0);
    }
};

// The short-k epilogue of OZ_MODP_TILE_STORE, a collective with the interface of CUTLASS's
// DefaultEpilogue (run through Sm90TmaWarpSpecializedAdapter). Each consumer thread reduces its
// accumulators mod p two at a time (Reduction::pair) and stores the byte pairs into shared
// memory at their place in the tile, rows padded by 16 bytes (two buffers, alternate tiles, so
// one barrier a tile suffices); after one barrier of the kThreads consumer threads, each stores
// whole 16-byte chunks of the tile to D. CUTLASS's TMA epilogue took the tile in subtiles with
// a barrier, a fence and a TMA store each (docs/perf-notes.md, "Phase A's epilogue: the tile
// stored at once").
template <class Reduction, int kTileM, int kTileN, int kThreads>
class OzTileStore {
  public:
    using ElementC = uint8_t;
    using ElementD = uint8_t;
    using StrideC = Stride<int64_t, _1, int64_t>;
    using StrideD = Stride<int64_t, _1, int64_t>;
    using GmemTiledCopyC = void;
    using GmemTiledCopyD = void;
    struct ThreadEpilogueOp {};  // no thread-level functor: the reduction is Reduction's
    static constexpr int kChunks = kTileN / 16;  // 16-byte chunks a tile row
    // a staged row and 16 bytes: rows 4 banks apart, so the 8 rows of a fragment's stores
    // (4 lanes a row, 2 bytes each) fall on 16 distinct banks
    static constexpr int kRowBytes = kTileN + 16;
    static_assert(kRowBytes / 4 % 32 == 4, "rows 4 banks apart");
    struct SharedStorage {
        alignas(128) uint8_t tile[2][kTileM * kRowBytes];
    };
    struct Arguments {
        uint8_t* ptr_D = nullptr;
        StrideD dD{};
        const int32_t* table = nullptr;
        int batches = 0;
    };
    using Params = Arguments;

    template <class ProblemShape>
    static constexpr Params to_underlying_arguments(ProblemShape const&, Arguments const& args,
                                                    void*) {
        return args;
    }
    template <class ProblemShape>
    static size_t get_workspace_size(ProblemShape const&, Arguments const&) {
        return 0;
    }
    template <class ProblemShape>
    static cutlass::Status initialize_workspace(ProblemShape const&, Arguments const&, void*,
                                                cudaStream_t,
                                                cutlass::CudaHostAdapter* = nullptr) {
        return cutlass::Status::kSuccess;
    }
    // 16-byte stores: D, its row and batch strides and n multiples of 16 bytes
    template <class ProblemShape>
    static bool can_implement(ProblemShape const& shape, Arguments const& args) {
        return get<1>(shape) % 16 == 0 && get<0>(args.dD) % 16 == 0 &&
               get<2>(args.dD) % 16 == 0 && reinterpret_cast<uintptr_t>(args.ptr_D) % 16 == 0 &&
               args.table != nullptr;
    }

    CUTLASS_HOST_DEVICE OzTileStore(Params const& params) : params_(params) {}

    CUTLASS_DEVICE bool is_source_needed() { return false; }

    template <class ProblemShapeMNKL, class BlockShapeMNK, class BlockCoordMNKL, class FrgEngine,
              class FrgLayout, class TiledMma, class ResidueMNK>
    CUTLASS_DEVICE void operator()(ProblemShapeMNKL problem_shape_mnkl, BlockShapeMNK blk_shape,
                                   BlockCoordMNKL blk_coord,
                                   Tensor<FrgEngine, FrgLayout> const& accumulators,
                                   TiledMma tiled_mma, ResidueMNK, int thread_idx, char* smem) {
        static_assert(size(TiledMma{}) == kThreads, "kThreads: the consumer threads");
        static_assert(size<0>(BlockShapeMNK{}) == kTileM && size<1>(BlockShapeMNK{}) == kTileN);
        const int m = get<0>(problem_shape_mnkl), n = get<1>(problem_shape_mnkl);
        const int m_coord = get<0>(blk_coord), n_coord = get<1>(blk_coord);
        const int l_coord = get<3>(blk_coord);
        const Reduction reduce(params_.table, params_.batches, l_coord);
        uint8_t* stage = reinterpret_cast<SharedStorage*>(smem)->tile[buffer_];
        buffer_ ^= 1;

        // the (row, column) in the tile of each accumulator; accumulators 2j and 2j + 1 are
        // neighbours in a row (the wgmma accumulator fragment)
        const Tensor coords = tiled_mma.get_thread_slice(thread_idx)
                                  .partition_C(make_identity_tensor(take<0, 2>(blk_shape)));
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < size(accumulators); i += 2) {
            const int row = get<0>(coords(i)), col = get<1>(coords(i));
            const unsigned pair = reduce.pair(accumulators(i), accumulators(i + 1));
            *reinterpret_cast<uint16_t*>(stage + row * kRowBytes + col) =
                static_cast<uint16_t>(pair);
        }
        cutlass::arch::NamedBarrier::sync(kThreads, 0);  // user barrier 0: past CUTLASS's

        const int rows = min(kTileM, m - m_coord * kTileM);
        const int chunks = min(kChunks, (n - n_coord * kTileN) / 16);
        uint8_t* d = params_.ptr_D + static_cast<int64_t>(l_coord) * get<2>(params_.dD) +
                     static_cast<int64_t>(m_coord) * kTileM * get<0>(params_.dD) +
                     static_cast<int64_t>(n_coord) * kTileN;
        CUTLASS_PRAGMA_UNROLL
        for (int q = thread_idx; q < kTileM * kChunks; q += kThreads) {
            const int row = q / kChunks, chunk = q % kChunks;
            const uint4 bytes =
                *reinterpret_cast<const uint4*>(stage + row * kRowBytes + chunk * 16);
            if (row < rows && chunk < chunks)
                *reinterpret_cast<uint4*>(d + row * get<0>(params_.dD) + chunk * 16) = bytes;
        }
    }

  private:
    Params params_;
    int buffer_ = 0;
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
using TmaEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape, EpilogueTile,
    ElementAcc, ElementAcc, void, LayoutD, kAlign, ElementD, LayoutD, kAlign, EpilogueSchedule,
    EVT>::CollectiveOp;
#if OZ_MODP_TILE_STORE && !OZ_MODP_PINGPONG
#define OZ_MODP_SHORT_TILE_STORE 1
using ShortEpilogue = cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<
    OzTileStore<OzShortReduction, OZ_MODP_TILE_M, OZ_MODP_TILE_N, 256>>;  // two warpgroups
#else
#define OZ_MODP_SHORT_TILE_STORE 0
using ShortEpilogue = TmaEpilogue<ShortEVT>;
#endif
using LongEpilogue = TmaEpilogue<LongEVT>;

template <class CollectiveEpilogue>
struct ModpGemm {
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
using LongGemm = ModpGemm<LongEpilogue>::Gemm;
using ShortGemm = ModpGemm<ShortEpilogue>::Gemm;

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

#if OZ_MODP_SHORT_TILE_STORE
    if constexpr (std::is_same_v<Gemm, ShortGemm>)
        return typename Gemm::Arguments{cutlass::gemm::GemmUniversalMode::kGemm,
                                        {m, n, k, batches},
                                        {a, stride_a, bt, stride_b},
                                        {d, stride_d, table, batches},
                                        hw};
    else {
#endif
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
#if OZ_MODP_SHORT_TILE_STORE
    }
#endif
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
