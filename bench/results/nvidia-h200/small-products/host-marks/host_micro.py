"""Host costs of the pieces of a prepared default call (ns per operation, medians of 2000)."""
import time, os, statistics, struct, ctypes
import numpy as np, cupy as cp
from ozfft import config, linalg
from ozfft.engines.cuda import engine as E
from ozfft.engines.select import cuda_engine
from cuda.bindings import driver
pc = time.perf_counter_ns
def med(f, n=2000):
    for _ in range(50): f()
    ts = []
    for _ in range(n):
        t0 = pc(); f(); ts.append(pc() - t0)
    return statistics.median(ts)
a = cp.zeros((1000, 64, 64), cp.complex128); b = cp.zeros((1000, 64, 64), cp.complex128)
eng = cuda_engine()
res = {}
res["noop"] = med(lambda: None)
res["a.shape"] = med(lambda: a.shape)
res["a.strides"] = med(lambda: a.strides)
res["a.dtype"] = med(lambda: a.dtype)
res["b.data.ptr"] = med(lambda: b.data.ptr)
res["product_switches"] = med(config.product_switches)
res["os.environ.get"] = med(lambda: os.environ.get("OZFFT_SLICES"))
res["getDevice"] = med(cp.cuda.runtime.getDevice)
res["current_device"] = med(linalg._current_device)
key = (type(a), a.shape, a.strides, a.dtype, b.shape, b.strides, b.dtype, b.data.ptr % 16, "fp64", None, type(None), "fast", None, config.product_switches(), 0)
d = {key: 1}
res["hash key"] = med(lambda: hash(key))
res["dict get key"] = med(lambda: d.get(key))
res["build key"] = med(lambda: (type(a), a.shape, a.strides, a.dtype, b.shape, b.strides, b.dtype, b.data.ptr % b.dtype.itemsize, "fp64", None, type(None), "fast", None, config.product_switches(), linalg._current_device()))
res["prepared lookup"] = med(lambda: linalg._prepared_product(a, b, "fp64", None, "fast", None))
res["cp.empty state"] = med(lambda: cp.empty((200000,), cp.int64))
res["cp.cuda.alloc"] = med(lambda: cp.cuda.alloc(1600000))
res["cp.empty out"] = med(lambda: cp.empty((1000, 64, 64), cp.complex128))
res["eng._alloc"] = med(lambda: eng._alloc("x", (200000,), cp.int64, 1600000))
s = cp.cuda.get_current_stream()
res["get_current_stream().ptr"] = med(lambda: cp.cuda.get_current_stream().ptr)
buf = cp.zeros((64,), cp.int64); qbuf = cp.zeros((16,), cp.int32)
res["memsetAsync"] = med(lambda: cp.cuda.runtime.memsetAsync(buf.data.ptr, 0, 80, s.ptr))
ev = cp.cuda.Event(disable_timing=True)
res["event.record"] = med(lambda: ev.record(s))
res["fork_point"] = med(lambda: E._fork_point(cp))
# a launch: the probe's deficits kernel (6 args) and the rows kernel (24 args) via DriverLaunch
k = eng._probe_kernel("oz_probe_deficits")
res["launch deficits (6 args, grid 1)"] = med(lambda: k((1,), (256,), (buf, qbuf, 1, 1, 1, 5)))
res["launch deficits int ptrs"] = med(lambda: k((1,), (256,), (buf.data.ptr, qbuf.data.ptr, 1, 1, 1, 5)))
cp.cuda.Device().synchronize()
fmt = struct.Struct("<" + "Q" * 24)
vals = ctypes.create_string_buffer(8 * 24)
res["pack_into 24"] = med(lambda: fmt.pack_into(vals, 0, *range(24)))
fn = k._function; st = driver.CUstream(init_value=s.ptr); addr = k._address
res["cuLaunchKernel alone"] = med(lambda: driver.cuLaunchKernel(fn, 1, 1, 1, 256, 1, 1, 0, st, addr, 0))
cp.cuda.Device().synchronize()
argl = (a, b, 1000, 0, 64, 64, 64, 64, 0, 0, 0, 0, 0, 22, 100, 7, 50, 2000, 0, 0, 0, 0, 0, 0)
isptr = (True, True) + (False,) * 11 + (False,) * 5 + (True,) * 4 + (False,) * 2
res["values list 24"] = med(lambda: [(x if isinstance(x, int) else x.data.ptr) if p else x for p, x in zip(isptr, argl, strict=True)])
for kk, v in res.items(): print(f"{kk:36s} {v/1000:7.2f} us")
