import subprocess, tempfile, pathlib, re
from ozfft.engines.cuda.constants import small_product_macros
from ozfft.engines.cuda.compiler import _as_macros
from ozfft.ozaki.residue_system import int8_system
from ozfft.scheme.gemm import gaussian_system_for
g = gaussian_system_for(int8_system(16))
base = dict(small_product_macros(g, out_float=False, rounding="nearest", chunk=g.count, shifts=False, slices=8, b_columns=True))
for tag, extra in (("base", {}), ("one", {"OZ_SP_EXP_BLOCKS": "1"}), ("one_nofill", {"OZ_SP_EXP_BLOCKS": "1", "OZ_SP_EXP_NOFILL": "1"}), ("nofill", {"OZ_SP_EXP_NOFILL": "1"}), ("one_nopark", {"OZ_SP_EXP_BLOCKS": "1", "OZ_SP_EXP_NOPARK": "1"}),
                   ("one_nopark_nofill", {"OZ_SP_EXP_BLOCKS": "1", "OZ_SP_EXP_NOPARK": "1", "OZ_SP_EXP_NOFILL": "1"}), ("nopark", {"OZ_SP_EXP_NOPARK": "1"})):
    mac = _as_macros(base | extra)
    d = tempfile.mkdtemp(); f = pathlib.Path(d) / "k.cu"
    f.write_text(mac.prologue + '\n#include "gemm/small_product.cu"\n')
    r = subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-std=c++17", "-Xptxas", "-v", "-I", "kernels", "-o", str(pathlib.Path(d)/"k.cubin"), str(f)], capture_output=True, text=True)
    lines = [l for l in r.stderr.splitlines() if "registers" in l or "spill" in l]
    print(tag, r.returncode, " | ".join(l.split("ptxas info    :")[-1].strip() for l in lines[-2:]))
