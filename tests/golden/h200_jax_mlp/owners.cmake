# jax.jit MLP: XLA's fusions (loaded by jaxlib's CUDA plugin) in compiled variants, its
# autotuner's trials, cuBLASLt's gemms; nothing in it is the program author's to launch.
set(REQUIRE
  [=["owner_library": "XLA \(jaxlib\)"]=]
  [=["owner_evidence": "loader"]=]
  [=["owner_library": "cuBLASLt"]=]
  [=["autotuning_trial": true]=]
  [=["autotuner": "XLA's autotuner"]=]
  [=["name_variants": [2-9]]=]
  [=["actions": \[\]]=])
set(FORBID
  [=["origin": "unknown"]=]
  [=["origin": "cuda_cpp"]=])
