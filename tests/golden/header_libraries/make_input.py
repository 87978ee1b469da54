#!/usr/bin/env python3
"""Writes input.sql: a trace of two user programs with header-library kernels compiled in,
thrust_user.cu (Thrust sort and reduce, CUB's DeviceScan, and the user's own heavy_stencil
with __launch_bounds__(1024)) and cutlass_user.cu (a CUTLASS 2.x SIMT SGEMM).

What comes from the compiler, not from occtrace: every mangled name (the FUNC symbols of
`nvcc -arch=sm_90 -cubin` of these files with CUDA 13.0's CCCL 3.0.1 and CUTLASS 4.x at
7107b05), registers and static shared memory (ptxas -v), and maxThreadsPerBlock (each
function's EIATTR_MAX_THREADS in .nv.info.<name>: CUB's and Thrust's policies'
__launch_bounds__, heavy_stencil's 1024). Demangled names come from c++filt. The device rows
are the real H200's of tests/golden/h200_cupy_sweep (device_rows.txt). Grids, launch counts and durations are
made up (no GPU here); the lead replaces this with a recorded trace of the same programs.

usage: make_input.py > input.sql
"""
import subprocess

THRUST = "/home/user/occ-demo/build/thrust_user"
CUTLASS = "/home/user/occ-demo/build/cutlass_user"
CUTLASS_GEMM = (
    "_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock12MmaPipelinedINS1_9GemmShapeILi128ELi128ELi8EEENS_9transform11threadblock22PredicatedTileIteratorINS_11MatrixShapeILi128ELi8EEEfNS_6layout8RowMajorELi1ENS8_30PitchLinearStripminedThreadMapINS_16PitchLinearShapeILi8ELi128EEELi256ELi1EEELi1ELb0ENSD_9NoPermuteEEENS9_19RegularTileIteratorISC_fNSD_11ColumnMajorELi1ENS8_33TransposePitchLinearThreadMapSimtISI_EELi4EEENSA_INSB_ILi8ELi128EEEfSE_Li0ENSF_INSG_ILi128ELi8EEELi256ELi1EEELi1ELb0ESJ_EENSL_ISQ_fSE_Li0ESS_Li4EEEfSE_NS4_9MmaPolicyINS1_4warp7MmaSimtINS6_ILi32ELi64ELi8EEEfSM_fSE_fSE_NSW_13MmaSimtPolicyINSB_ILi4ELi8EEENSD_19RowMajorInterleavedILi2EEENS6_ILi4ELi4ELi1EEEEELi1ELNS_16ComplexTransformE0ELS15_0EbEENSB_ILi4ELi0EEENSB_ILi0ELi0EEELi1EEENS_21NumericArrayConverterIffLi4ELNS_15FloatRoundStyleE2ENS8_6thread14UnaryTransform8IdentityEEES1F_bEENS_8epilogue11threadblock8EpilogueIS7_S16_Li1ENS1I_22PredicatedTileIteratorINS1I_26OutputTileOptimalThreadMapINS1I_15OutputTileShapeILi128ELi1ELi4ELi4ELi1EEENS1M_ILi1ELi4ELi2ELi1ELi8EEELi256ELi1ELi32EEEfLb0ESJ_Lb0EEENS1H_4warp20FragmentIteratorSimtISY_NS1_6thread3MmaINS6_ILi8ELi8ELi1EEEfSM_fSE_fSE_NS_4arch13OpMultiplyAddEbEESE_S14_EENS1R_16TileIteratorSimtISY_S1Y_fSE_S14_EENS1I_18SharedLoadIteratorINS1P_18CompactedThreadMapEfLi4EEENS1H_6thread17LinearCombinationIfLi1EffLNS25_9ScaleType4KindE0ELS1B_2EfEENSB_ILi0ELi17EEELi1ELi1EEENS4_30GemmIdentityThreadblockSwizzleILi1EEELb0EEEEEvNT_6ParamsE")

# (module, mangled, short name, registers, static smem, max threads (None: no bound),
#  grid, block, dynamic smem, launches, duration ns)
KERNELS = [
    (1, "_ZN3cub17CUB_300001_SM_9006detail10radix_sort29DeviceRadixSortOnesweepKernelINS1_5radix10policy_hubIjNS0_8NullTypeEyE10Policy1000ELNS0_9SortOrderE0EjS6_yiiNS1_21identity_decomposer_tEEEvPT5_SC_PT3_PKSD_PT1_PKSH_PT2_PKSL_T4_iiT6_",
     "DeviceRadixSortOnesweepKernel", 56, 31232, 384, (2081, 1, 1), (384, 1, 1), 0, 40, 95_000),
    (1, "_ZN3cub17CUB_300001_SM_9006detail10radix_sort30DeviceRadixSortHistogramKernelINS1_5radix10policy_hubIjNS0_8NullTypeEyE10Policy1000ELNS0_9SortOrderE0EjyNS1_21identity_decomposer_tEEEvPT2_PKT1_SB_iiT3_",
     "DeviceRadixSortHistogramKernel", 40, 4096, 128, (264, 1, 1), (128, 1, 1), 0, 10, 25_000),
    (1, "_ZN3cub17CUB_300001_SM_9006detail6reduce18DeviceReduceKernelINS2_10policy_hubIjjN4cuda3std3__44plusIjEEE10Policy1000EN6thrust23THRUST_300001_SM_900_NS6detail15normal_iteratorINSD_10device_ptrIjEEEEjS9_jNS7_10__identityEEEvT0_PT3_T1_NS0_13GridEvenShareISN_EET2_T4_",
     "DeviceReduceKernel", 32, 44, 256, (264, 1, 1), (256, 1, 1), 0, 10, 30_000),
    (1, "_ZN3cub17CUB_300001_SM_9006detail6reduce28DeviceReduceSingleTileKernelINS2_10policy_hubIjjN4cuda3std3__44plusIjEEE10Policy1000EN6thrust23THRUST_300001_SM_900_NS6detail15normal_iteratorINSD_10device_ptrIjEEEEPjjS9_jjNS7_10__identityEEEvT0_T1_T2_T3_T4_T6_",
     "DeviceReduceSingleTileKernel", 32, 44, 256, (1, 1, 1), (256, 1, 1), 0, 10, 4_000),
    (1, "_ZN3cub17CUB_300001_SM_9006detail4scan20DeviceScanInitKernelINS0_13ScanTileStateIjLb1EEEEEvT_i",
     "DeviceScanInitKernel", 12, 0, None, (65, 1, 1), (128, 1, 1), 0, 10, 2_500),
    (1, "_ZN3cub17CUB_300001_SM_9006detail4scan16DeviceScanKernelINS2_10policy_hubIjjjjN4cuda3std3__44plusIvEEE10Policy1000EPjSC_NS0_13ScanTileStateIjLb1EEES9_NS1_10InputValueIjSC_EEjjLb0EjEEvT0_T1_T2_iT3_T4_T5_",
     "DeviceScanKernel", 64, 12304, 128, (8192, 1, 1), (128, 1, 1), 0, 10, 110_000),
    (1, "_ZN3cub17CUB_300001_SM_9006detail8for_each13static_kernelINS2_12policy_hub_t12policy_500_tEmN6thrust23THRUST_300001_SM_900_NS8cuda_cub20__uninitialized_fill7functorINS7_10device_ptrIjEEjEEEEvT0_T1_",
     "static_kernel", 10, 0, 256, (16384, 1, 1), (256, 1, 1), 0, 10, 40_000),
    (1, "_Z13heavy_stencilPKfPfi", "heavy_stencil", 14, 0, 1024, (16384, 1, 1), (1024, 1, 1), 0, 10, 60_000),
    (2, CUTLASS_GEMM, "Kernel", 137, 0, None, (32, 32, 1), (256, 1, 1), 16384, 10, 2_100_000),
]


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def q(s):
    return "NULL" if s is None else "'" + str(s).replace("'", "''") + "'"


def main():
    rows = []
    meta = {"schema_version": "1", "occtrace_version": "0.1.0", "command_line": "./thrust_user && ./cutlass_user",
            "pid": "4242", "host": "vm", "trace_mode": "full", "status": "complete",
            "cuda_driver_version": "13.0", "cuda_runtime_version": "13.0", "cupti_version": "130001",
            "launch_count": str(sum(k[9] for k in KERNELS))}
    for name, value in meta.items():
        rows.append(f'INSERT INTO "OCC_META"("name","value") VALUES({q(name)},{q(value)});')
    with open(__file__.rsplit("/", 1)[0] + "/device_rows.txt") as f:
        rows += [line.rstrip("\n") for line in f]
    rows.append(f'INSERT INTO "OCC_MODULE"("moduleId","library","loader") VALUES(1,NULL,{q(THRUST)});')
    rows.append(f'INSERT INTO "OCC_MODULE"("moduleId","library","loader") VALUES(2,NULL,{q(CUTLASS)});')
    demangled = demangle([k[1] for k in KERNELS])
    string_id = 1
    launches = []
    start = 1_795_810_740_000_000_000
    correlation = 1
    for config, (k, full) in enumerate(zip(KERNELS, demangled), start=1):
        module, mangled, short, regs, smem, max_threads, grid, block, dyn, count, duration = k
        ids = {}
        # ptxas -v: "used 1 barriers" but for these three.
        barriers = 0 if short in ("DeviceScanInitKernel", "static_kernel", "heavy_stencil") else 1
        for key, text in (("demangled", full), ("short", short), ("mangled", mangled)):
            rows.append(f'INSERT INTO "StringIds"("id","value") VALUES({string_id},{q(text)});')
            ids[key] = string_id
            string_id += 1
        rows.append(
            'INSERT INTO "OCC_KERNEL_CONFIG"("id","deviceId","contextId","greenContextId","demangledName",'
            '"shortName","mangledName","launchType","cacheConfig","registersPerThread","gridX","gridY","gridZ",'
            '"blockX","blockY","blockZ","staticSharedMemory","dynamicSharedMemory","localMemoryPerThread",'
            '"localMemoryTotal","sharedMemoryExecuted","sharedMemoryLimitConfig","sharedMemoryRequestedPercentage",'
            '"graphId","graphNodeId","clusterX","clusterY","clusterZ","clusterSchedulingPolicy",'
            '"maxPotentialClusterSize","maxActiveClusters","isDeviceLaunched") VALUES('
            f'{config},0,1,NULL,{ids["demangled"]},{ids["short"]},{ids["mangled"]},0,0,{regs},'
            f'{grid[0]},{grid[1]},{grid[2]},{block[0]},{block[1]},{block[2]},{smem},{dyn},0,0,0,0,NULL,0,0,0,0,0,1,0,0,0);')
        rows.append(
            'INSERT INTO "OCC_FUNCTION"("moduleId","mangledName","localMemoryPerThread","minStackSize",'
            f'"maxStackSize","barrierCount","registersPerThread","maxThreadsPerBlock") VALUES({module},'
            f'{ids["mangled"]},0,0,NULL,{barriers},{regs},{max_threads or "NULL"});')
        launches.append((config, count, duration))
    # One stream, one launch after another: each kernel's launches in turn, 5 µs apart.
    for config, count, duration in launches:
        for _ in range(count):
            rows.append('INSERT INTO "OCC_LAUNCH"("start","duration","configId","streamId","correlationId") '
                        f'VALUES({start},{duration},{config},7,{correlation});')
            start += duration + 5_000
            correlation += 1
    print("\n".join(rows))


if __name__ == "__main__":
    main()
