// The output format of the kernels that round a CRT integer (gemm/phase_b.cu,
// gemm/small_product.cu): binary64 unless OZ_OUT_FLOAT asks for binary32.
#pragma once

#ifdef OZ_OUT_FLOAT
typedef float oz_out_real;
typedef float2 oz_out_complex;
#define OZ_PREC 24
#define OZ_EMIN -126
#define OZ_EMAX 127
#else
typedef double oz_out_real;
typedef double2 oz_out_complex;
#define OZ_PREC 53
#define OZ_EMIN -1022
#define OZ_EMAX 1023
#endif
