# torchvision ResNet-18 training with cudnn.benchmark: cuDNN's, cuBLASLt's and ATen's kernels by
# the library that loaded them; cuDNN's benchmark trials named as autotuning; no action at all.
set(REQUIRE
  [=["owner_library": "cuDNN"]=]
  [=["owner_evidence": "loader"]=]
  [=["owner_library": "cuBLASLt"]=]
  [=["origin": "aten"]=]
  [=["autotuning_trial": true]=]
  [=["actions": \[\]]=])
set(FORBID
  [=["origin": "unknown"]=]
  [=["origin": "cuda_cpp"]=]
  [=[__launch_bounds__]=])
