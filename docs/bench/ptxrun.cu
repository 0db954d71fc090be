// ptxrun launches one tltune GEMM kernel, built by NVIDIA's OpenCL, through
// the CUDA driver API, so that Nsight Compute (which does not see OpenCL
// launches) can profile it. docs/bench/ncu_gemm.sh prepares its PTX and
// arguments; see there.
//
//   ptxrun PTX GX GY BX BY BYTES_A BYTES_B BYTES_C BATCH ELEM_A [LAUNCHES]
//
// The kernel must take tltune's strided GEMM arguments (docs/abi.md): the
// data of A, B and C, each followed by its batch extent. A and B are filled
// with random values of ELEM_A bytes each (2: f16 in [0.5, 1); 4 and 8:
// f32 and f64 in [-0.5, 0.5); 16: c64 of such f64 parts), so that the
// arithmetic draws the power it does when tltune times it; C is left as
// cuMemAlloc gives it (the kernels write C with β = 0, as gemm.sh's
// problems have). After three warm-up launches it times
// LAUNCHES more back to back (default 50) and prints the mean.
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* s = "unknown error";
  cuGetErrorString(r, &s);
  fprintf(stderr, "ptxrun: %s: %s\n", what, s);
  exit(3);
}

static std::string readFile(const char* path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    fprintf(stderr, "ptxrun: cannot read %s\n", path);
    exit(2);
  }
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// entryName is the name of the PTX's first kernel.
static std::string entryName(const std::string& ptx) {
  size_t e = ptx.find(".entry ");
  size_t p = e == std::string::npos ? e : ptx.find('(', e);
  if (p == std::string::npos) {
    fprintf(stderr, "ptxrun: no .entry in the PTX\n");
    exit(2);
  }
  size_t b = e + 7;
  while (ptx[b] == ' ') ++b;
  size_t end = p;
  while (end > b && (ptx[end - 1] == ' ' || ptx[end - 1] == '\n')) --end;
  return ptx.substr(b, end - b);
}

// randomBuffer allocates bytes of device memory holding random elements.
static CUdeviceptr randomBuffer(size_t bytes, int elem, unsigned seed) {
  std::vector<unsigned char> h(bytes);
  unsigned s = seed;
  int step = elem > 8 ? 8 : elem;
  for (size_t i = 0; i + step <= bytes; i += step) {
    s = s * 1664525u + 1013904223u;
    double x = (double)((s >> 8) & 0xffffu) / 65536.0 - 0.5;
    if (elem == 2) {
      unsigned short half = (unsigned short)(0x3800u | ((s >> 16) & 0x3ffu));  // f16 in [0.5, 1)
      memcpy(&h[i], &half, 2);
    } else if (elem == 4) {
      float f = (float)x;
      memcpy(&h[i], &f, 4);
    } else {
      memcpy(&h[i], &x, 8);  // f64; complex: each part
    }
  }
  CUdeviceptr d;
  check(cuMemAlloc(&d, bytes), "cuMemAlloc");
  check(cuMemcpyHtoD(d, h.data(), bytes), "cuMemcpyHtoD");
  return d;
}

int main(int argc, char** argv) {
  if (argc < 11) {
    fprintf(stderr, "usage: ptxrun PTX GX GY BX BY BYTES_A BYTES_B BYTES_C BATCH ELEM_A [LAUNCHES]\n");
    return 2;
  }
  std::string ptx = readFile(argv[1]);
  unsigned gx = atoi(argv[2]), gy = atoi(argv[3]), bx = atoi(argv[4]), by = atoi(argv[5]);
  size_t bytesA = atoll(argv[6]), bytesB = atoll(argv[7]), bytesC = atoll(argv[8]);
  unsigned long long batch = atoll(argv[9]);
  int elem = atoi(argv[10]);
  int launches = argc > 11 ? atoi(argv[11]) : 50;

  check(cuInit(0), "cuInit");
  CUdevice dev;
  check(cuDeviceGet(&dev, 0), "cuDeviceGet");
  CUcontext ctx;
  check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  CUmodule mod;
  check(cuModuleLoadData(&mod, ptx.c_str()), "cuModuleLoadData");
  CUfunction fn;
  std::string name = entryName(ptx);
  check(cuModuleGetFunction(&fn, mod, name.c_str()), "cuModuleGetFunction");
  int regs = 0;
  check(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn), "cuFuncGetAttribute");

  CUdeviceptr a = randomBuffer(bytesA, elem, 1), b = randomBuffer(bytesB, elem, 2), c;
  check(cuMemAlloc(&c, bytesC), "cuMemAlloc");
  void* args[] = {&a, &batch, &b, &batch, &c, &batch};
  for (int i = 0; i < 3; ++i) check(cuLaunchKernel(fn, gx, gy, 1, bx, by, 1, 0, 0, args, 0), "cuLaunchKernel");
  CUevent start, stop;
  check(cuEventCreate(&start, 0), "cuEventCreate");
  check(cuEventCreate(&stop, 0), "cuEventCreate");
  check(cuEventRecord(start, 0), "cuEventRecord");
  for (int i = 0; i < launches; ++i) check(cuLaunchKernel(fn, gx, gy, 1, bx, by, 1, 0, 0, args, 0), "cuLaunchKernel");
  check(cuEventRecord(stop, 0), "cuEventRecord");
  check(cuEventSynchronize(stop), "cuEventSynchronize");
  float ms = 0;
  check(cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
  printf("%s: %d registers, %.2f us a launch (mean of %d back to back)\n", name.c_str(), regs, ms * 1e3 / launches, launches);
  return 0;
}
