# Triton @autotune over 4 configs: the 3 it rejected are autotuning trials, the chosen one gets
# no launch-configuration advice (nothing shows a config outside its list would win); torch's
# own kernels are ATen's. No action.
set(REQUIRE
  [=["short_name": "softplus_add",]=]
  [=["origin": "triton"]=]
  [=["loader": "triton-cache/cuda_utils]=]
  [=["autotuning_trial": true]=]
  [=["autotuner": "Triton's autotuner \(@triton.autotune\)"]=]
  [=["actions": \[\]]=])
set(FORBID
  [=["origin": "unknown"]=]
  [=[num_warps=2]=])
