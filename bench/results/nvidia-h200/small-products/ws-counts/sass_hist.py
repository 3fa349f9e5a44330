import subprocess, tempfile, pathlib, re, collections, sys
from ozfft.engines.cuda.constants import small_product_macros
from ozfft.engines.cuda.compiler import _as_macros
from ozfft.ozaki.residue_system import int8_system
from ozfft.scheme.gemm import gaussian_system_for
g = gaussian_system_for(int8_system(16))
mac = _as_macros(dict(small_product_macros(g, out_float=False, rounding="nearest", chunk=g.count, shifts=False, slices=8, b_columns=True)))
d = pathlib.Path(tempfile.mkdtemp()); f = d / "k.cu"
f.write_text(mac.prologue + '\n#include "gemm/small_product.cu"\n')
subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-std=c++17", "-I", "kernels", "-o", str(d/"k.cubin"), str(f)], check=True)
out = subprocess.run(["/tmp/cuobj/nvidia/cu13/bin/nvdisasm", "-c", str(d/"k.cubin")], capture_output=True, text=True).stdout
# split per function
funcs = re.split(r"\n\s*\.text\.(\w+):", out)
hist = collections.Counter(); total = 0
for line in out.splitlines():
    m = re.match(r"\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
    if m:
        op = m.group(2).split(".")[0]; hist[op] += 1; total += 1
print("static instructions:", total)
for op, c in hist.most_common(30): print(f"{op:10s} {c}")
open("/tmp/sass_complex.txt", "w").write(out)
