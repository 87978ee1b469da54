// Kernels launched through the CUDA driver API by launch_matrix: compiled to PTX at build time,
// embedded into the program and JIT-loaded with cuModuleLoadData / cuLibraryLoadData, the way
// frameworks with their own code generators (numba, Triton, CuPy) load kernels. extern "C" so
// that cuModuleGetFunction / cuLibraryGetKernel find them by their plain names.

extern "C" __global__ void k_driver_saxpy(float a, const float* x, float* y, int n) {
  int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) y[i] = a * x[i] + y[i];
}

// Uses dynamic shared memory so the driver launch carries sharedMemBytes != 0.
extern "C" __global__ void k_driver_scale(float* data, float factor, int n) {
  extern __shared__ float staging[];
  int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  staging[threadIdx.x] = i < n ? data[i] : 0.0f;
  __syncthreads();
  if (i < n) data[i] = staging[threadIdx.x] * factor;
}
