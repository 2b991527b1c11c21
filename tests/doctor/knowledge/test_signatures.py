"""Each error signature, one at a time, on real text quoted from the public issue (or source file) where it appears.

The quotes are verbatim (log prefixes included) unless the comment says a value was filled in.
Each case also checks the numbers pulled out of the text and that the scanner's anchor is present,
so the streaming prefilter can never skip a line this signature would match.
"""

from __future__ import annotations

import io

import pytest

from doctor.commands.log_input import open_log
from doctor.knowledge.signatures import LOG_SIGNATURES, PLAN_HINTS, PROBE_KINDS, SEVERITIES, SIGNATURES, by_id
from doctor.logscan.scanner import Scanner

CASES = [
    # (signature, URL where the text was reported, the quoted text, numbers expected)
    ("no-kernel-image", "https://github.com/Ph0rk0z/SageAttention2/issues/11",
     "!!! Exception during processing !!! CUDA error: no kernel image is available for execution on the device", {}),
    ("no-kernel-image", "https://github.com/vllm-project/vllm/issues/5547",
     "[rank0]: RuntimeError: CUDA error: no kernel image is available for execution on the device", {}),
    ("torch-capability-too-old", "https://github.com/vllm-project/vllm/issues/19185",
     "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:262: UserWarning: \n"
     "    Found GPU1 Tesla V100-PCIE-16GB which is of cuda capability 7.0.\n"
     "    PyTorch no longer supports this GPU because it is too old.\n"
     "    The minimum cuda capability supported by this library is 7.5.",
     {"gpu_index": 1, "gpu_name": "Tesla V100-PCIE-16GB", "card_cc": "7.0", "min_cc": "7.5"}),
    ("torch-capability-not-compatible", "https://github.com/vllm-project/vllm/issues/21633",
     "vllm-1  | NVIDIA GeForce RTX 5070 Ti with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
     "vllm-1  | The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.",
     {"card_cc": "12.0", "built_for": "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"}),
    ("torch-capability-cc-list", "https://github.com/pytorch/pytorch/issues/182250",
     "/home/matti/test/test_torch_2.7/.venv/lib/python3.12/site-packages/torch/cuda/__init__.py:371: UserWarning: "
     "Found GPU0 Tesla V100-PCIE-32GB which is of compute capability (CC) 7.0.\n"
     "The following list shows the CCs this version of PyTorch was built for and the hardware CCs it supports:\n"
     "- 7.5 which supports hardware CC >=7.5,<8.0\n"
     "- 8.0 which supports hardware CC >=8.0,<9.0 except {8.7}\n"
     "- 8.6 which supports hardware CC >=8.6,<9.0 except {8.7}\n"
     "- 9.0 which supports hardware CC >=9.0,<10.0\n"
     "- 10.0 which supports hardware CC >=10.0,<11.0 except {10.1}\n"
     "- 12.0 which supports hardware CC >=12.0,<13.0\n"
     "Please follow the instructions at https://pytorch.org/get-started/locally/ to install a PyTorch release that "
     "supports one of these CUDA versions: 12.6, 12.8",
     {"gpu_index": 0, "gpu_name": "Tesla V100-PCIE-32GB", "card_cc": "7.0", "suggested_cuda": "12.6, 12.8"}),
    ("torch-maxwell-pascal-removed", "https://github.com/pytorch/pytorch/pull/158700",
     "                        Support for Maxwell and Pascal architectures is removed for CUDA 12.8+ builds.", {"cuda": "12.8"}),
    ("flash-attn-needs-ampere", "https://github.com/turboderp-org/exllamav2/issues/502",
     "RuntimeError: FlashAttention only supports Ampere GPUs or newer - despite asking it to disable flash_attention", {}),
    ("flash-attn-needs-ampere", "https://github.com/vllm-project/vllm/issues/8189",
     "ERROR 05-18 03:54:51 [engine.py:448] RuntimeError: FlashAttention only supports Ampere GPUs or newer.", {}),
    # exllamav2/attn.py prints this line (source quoted; issue #502 is the crash that follows it)
    ("exllamav2-flash-attn-unsupported-gpu", "https://github.com/turboderp-org/exllamav2/blob/master/exllamav2/attn.py",
     " ## Warning: Flash Attention is installed but unsupported GPUs were detected.", {}),
    ("paged-attention-needs-flash-attn", "https://github.com/theroyallab/tabbyAPI/issues/120",
     "AssertionError: Paged attention required Flash Attention 2.5.7 or later [BUG]", {"min_version": "2.5.7"}),
    ("tabbyapi-compatibility-mode", "https://github.com/turboderp-org/exllamav2/issues/502",
     "WARNING:  An unsupported GPU is found in this configuration. Switching to compatibility mode.\n"
     "WARNING:  This disables parallel batching and features that rely on it (ex. CFG).\n"
     "WARNING:  To disable compatability mode, all GPUs must be ampere (30 series) or newer. AMD GPUs are not supported.", {}),
    # no public issue quotes it: the assert in exllamav2/generator/dynamic.py is the text
    ("dynamic-generator-8bit-cache", "https://github.com/turboderp-org/exllamav2/blob/master/exllamav2/generator/dynamic.py",
     "AssertionError: Dynamic generator does not currently work with 8-bit cache. Use either FP16 or Q4.", {}),
    ("cuda-oom", "https://github.com/turboderp-org/exllamav2/issues/761",
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 14.74 GiB "
     "of which 38.12 MiB is free. Process 207160 has 14.70 GiB memory in use. Of the allocated memory 14.36 GiB is "
     "allocated by PyTorch, and 217.26 MiB is reserve",
     {"tried_mib": 64.0, "gpu_index": 0, "total_mib": 15093.76, "free_mib": 38.12, "other_pid": 207160,
      "in_use_mib": 15052.8, "torch_allocated_mib": 14704.64}),
    ("cuda-oom", "https://github.com/meta-llama/llama/issues/918",  # a V100; torch 2.1 spelled it "capacty"
     "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 3 has a total capacty of "
     "15.77 GiB of which 289.38 MiB is free. Including non-PyTorch memory, this process has 15.49 GiB memory in use. "
     "Of the allocated memory 14.66 GiB is allocated by PyTorch, and 483.75 MiB is reserved by PyTorch but unallocated.",
     {"tried_mib": 448.0, "gpu_index": 3, "total_mib": 16148.48, "free_mib": 289.38, "in_use_mib": 15861.76}),
    ("exl3-needs-exllamav3", "https://github.com/oobabooga/textgen/issues/6839",
     "    from exllamav3 import Cache, Config, Model\nModuleNotFoundError: No module named 'exllamav3'", {}),
    ("cuda-malloc-async-oom", "https://github.com/EvilBT/ComfyUI_SLK_joy_caption_two/issues/28",
     "Allocation on device 0 would exceed allowed memory. (out of memory)\nCurrently allocated : 15.16 GiB\n"
     "Requested : 512.00 KiB\nDevice limit : 15.99 GiB\nFree (according to CUDA): 0 bytes",
     {"gpu_index": 0, "allocated_mib": 15523.84, "tried_mib": 0.5, "total_mib": 16373.76, "free_mib": 0.0}),
    ("cuda-malloc-async-oom", "https://github.com/pytorch/pytorch/issues/110194",
     "torch.cuda.OutOfMemoryError: Allocation on device 5 would exceed allowed memory. (out of memory)\n"
     "Currently allocated     : 54.14 GiB\nRequested               : 686.41 MiB\nDevice limit            : 79.35 GiB\n"
     "Free (according to CUDA): 27.19 MiB\nPyTorch limit (set by user-supplied memory fraction)\n"
     "                        : 17179869184.00 GiB",
     {"gpu_index": 5, "allocated_mib": 55439.36, "tried_mib": 686.41, "total_mib": 81254.4, "free_mib": 27.19}),
    ("tabbyapi-one-gpu-no-split", "https://github.com/theroyallab/tabbyAPI/blob/main/backends/exllamav2/model.py",
     "INFO:     Disabling GPU split because one GPU is in use.", {}),
    ("cuda-oom-legacy", "https://github.com/kchengiva/Shift-GCN/issues/34",
     "`RuntimeError: CUDA out of memory. Tried to allocate 236.00 MiB (GPU 0; 15.78 GiB total capacity; 14.25 GiB "
     "already allocated; 183.50 MiB free; 14.34 GiB reserved in total by PyTorch)`",
     {"tried_mib": 236.0, "total_mib": 16158.72, "torch_allocated_mib": 14592.0, "free_mib": 183.5}),
    ("cuda-oom-plain", "https://github.com/turboderp-org/exllamav2/issues/677",  # the excerpt ends mid-sentence
     "torch.OutOfMemoryError: CUDA out of memory. Tried to", {}),
    ("exllamav2-insufficient-vram", "https://github.com/turboderp-org/exllamav2/issues/383",
     "RuntimeError: Insufficient VRAM for model and cache", {}),
    ("exllamav2-insufficient-vram", "https://github.com/turboderp-org/exllamav3/issues/50",
     "RuntimeError: Insufficient VRAM in split for model and cache despite remaining 1GB VRAM (exllamav3 + tabbyAPI)", {}),
    ("exllamav2-insufficient-space", "https://github.com/turboderp-org/exllamav2/issues/168",
     "AssertionError: Insufficient space in device allocation", {}),
    ("cuda-version-mismatch", "https://github.com/vllm-project/vllm/issues/1060",
     "      RuntimeError:\n"
     "      The detected CUDA version (12.2) mismatches the version that was used to compile\n"
     "      PyTorch (11.7). Please make sure to use the same CUDA versions.",
     {"nvcc_cuda": "12.2", "torch_cuda": "11.7"}),
    ("cuda-version-mismatch", "https://github.com/icip-cas/AutoAlign/issues/25",
     "RuntimeError: The detected CUDA version (11.8) mismatches the version that was used to compile PyTorch (12.4). "
     "Please make sure to use the same CUDA versions.", {"nvcc_cuda": "11.8", "torch_cuda": "12.4"}),
    ("nvcc-unsupported-arch", "https://github.com/RenderKit/oidn/issues/274",  # CUDA 13 building sm_70
     "nvcc fatal   : Unsupported gpu architecture 'compute_70'", {"arch_cc": "7.0"}),
    ("cuda-home-not-set", "https://github.com/turboderp-org/exui/issues/38",
     "The error says I did not have raise OSError('CUDA_HOME environment variable is not set. '", {}),
    ("cuda-home-not-set", "https://github.com/turboderp/exllama/issues/70",
     "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.", {}),
    ("ninja-missing", "https://github.com/smthemex/ComfyUI_YuE/issues/12",
     "!!! Exception during processing !!! Ninja is required to load C++ extensions", {}),
    ("exllamav2-ext-undefined-symbol", "https://github.com/turboderp-org/exllamav2/issues/427",
     "ImportError: /home/ec2-user/.cache/torch_extensions/py310_cu121/exllamav2_ext/exllamav2_ext.so: undefined symbol: "
     "_ZN3c104cuda14ExchangeDeviceEa", {"symbol": "_ZN3c104cuda14ExchangeDeviceEa"}),
    ("exllamav2-ext-undefined-symbol", "https://github.com/turboderp-org/exllamav2/issues/505",
     "\"undefined symbol\" error here usually means you are attempting to load a prebuilt extension wheel that was "
     "compiled against a different version of PyTorch than the one you are you using.", {}),
    # exllamav2/config.py: f" ## No .safetensors files found in {self.model_dir}" (the directory is filled in)
    ("flash-attn-undefined-symbol", "https://github.com/Dao-AILab/flash-attention/issues/853",
     "ImportError: /XXXXX/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined "
     "symbol: _ZN3c104cuda9SetDeviceEi", {"module": "flash_attn_2_cuda", "symbol": "_ZN3c104cuda9SetDeviceEi"}),
    ("flash-attn-undefined-symbol", "https://github.com/sgl-project/sglang/issues/851",
     " /opt/conda/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
     "_ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEENS2_8optionalINS2_10ScalarTypeEEENS6_INS2_6LayoutEEENS6_INS2_6DeviceEEENS6_IbEE",
     {"module": "flash_attn_2_cuda"}),
    ("flash-attn-undefined-symbol", "https://github.com/HuangLK/transpeeder/issues/31",  # flash-attn 1, the title
     "flash_attn_cuda.cpython-38-x86_64-linux-gnu.so: undefined symbol", {"module": "flash_attn_cuda"}),
    ("python-module-missing", "https://github.com/oobabooga/textgen/issues/6163",
     "ModuleNotFoundError: No module named 'exllamav2'", {"module": "exllamav2"}),
    ("no-safetensors-found", "https://github.com/turboderp-org/exllamav2/blob/master/exllamav2/config.py",
     " ## No .safetensors files found in /models/Qwen2.5-32B [4.0bpw]", {"model_dir": "/models/Qwen2.5-32B [4.0bpw]"}),
    ("accelerate-offloaded-to-cpu", "https://github.com/hiyouga/LlamaFactory/issues/4697",
     "WARNING:root:Some parameters are on the meta device device because they were offloaded to the cpu.",
     {"offloaded_to": "cpu"}),
    ("accelerate-offloaded-to-cpu", "https://github.com/hiyouga/LlamaFactory/issues/4697",
     "WARNING:root:Some parameters are on the meta device device because they were offloaded to the cpu and disk.",
     {"offloaded_to": "cpu and disk"}),
    # accelerate's own line (big_modeling.py, the PR that added it)
    ("accelerate-offloaded-to-cpu", "https://github.com/huggingface/accelerate/pull/2075",
     '            logging.warning("Some parameters are on the meta device device because they were offloaded to the '
     'cpu and/or disk.")', {"offloaded_to": "cpu and/or disk"}),
    ("argparse-unrecognized-arguments", "https://github.com/bmaltais/kohya_ss/issues/280",  # path "10_jennifer aniston person"
     "train_network.py: error: unrecognized arguments: aniston aniston", {"args": "aniston aniston"}),
    ("vllm-quantization-min-capability", "https://github.com/vllm-project/vllm/issues/4202",
     "[Bug]: The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70.",
     {"method": "awq", "min_cc": "7.5", "card_cc": "7.0"}),
    ("vllm-quant-scheme-min-capability", "https://github.com/1CatAI/1Cat-vLLM/issues/94",  # a V100 (70)
     "RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 75. ', "
     "'Current capability: 70.')", {"min_cc": "7.5", "card_cc": "7.0"}),
    ("vllm-quant-scheme-min-capability", "https://github.com/vllm-project/vllm/issues/14040",
     "[Bug]: RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', "
     "'Current capability: 75.')", {"min_cc": "8.0", "card_cc": "7.5"}),
    ("vllm-bf16-needs-cc80", "https://github.com/vllm-project/vllm/issues/946",
     "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-32GB "
     "GPU has compute capability 7.0.", {"min_cc": "8.0", "gpu_name": "Tesla V100-SXM2-32GB", "card_cc": "7.0"}),
    ("vllm-bf16-needs-cc80", "https://github.com/substratusai/vllm-docker/issues/37",
     "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has "
     "compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: "
     "--dtype=half.", {"gpu_name": "Tesla T4", "card_cc": "7.5"}),
    ("vllm-bf16-needs-cc80", "https://github.com/vllm-project/vllm/issues/1284",
     "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla P100-PCIE-16GB GPU has "
     "compute capability 6.0.", {"card_cc": "6.0"}),
    ("vllm-bf16-needs-cc80", "https://github.com/OpenBuddy/OpenBuddy/issues/45",  # lower-cased by the poster
     "valueerror: bfloat16 is only supported on gpus with compute capability of at least 8.0. your tesla v100-sxm2-32gb "
     "gpu has compute capability 7.0.", {"card_cc": "7.0"}),
    ("torch-autocast-bf16-unsupported", "https://github.com/karpathy/nanoGPT/pull/277",  # V100 users in the thread
     "    raise RuntimeError('Current CUDA Device does not support bfloat16. Please switch dtype to float16.')\n"
     "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.", {}),
    ("torch-autocast-bf16-unsupported", "https://github.com/weipu-zhang/STORM/issues/4",  # a P100, the title
     "RuntimeError: Current CUDA Device does not support bfloat16.", {}),
    ("bf16-needs-a100", "https://github.com/deepseek-ai/DeepSeek-VL2/issues/119",
     "`cutlassF-pt` is not supported because:\n    bf16 is only supported on A100+ GPUs", {}),
    ("triton-cc-too-old", "https://github.com/vllm-project/vllm/issues/13202",
     "RuntimeError: Found Tesla P40 which is too old to be supported by the triton GPU compiler, which is used as the "
     "backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.1",
     {"gpu_name": "Tesla P40", "card_cc": "6.1"}),
    ("triton-cc-too-old", "https://github.com/vllm-project/vllm/issues/14547",  # the title, cut by GitHub
     "[Bug]: RuntimeError: Found Tesla P100-SXM2-16GB which is too old to be supported by the triton GPU compiler, "
     "which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but y",
     {"gpu_name": "Tesla P100-SXM2-16GB"}),
    ("triton-cc-too-old", "https://github.com/2noise/ChatTTS/issues/341",
     "[2024-06-18 19:45:55,713] torch._dynamo.convert_frame: [WARNING] RuntimeError: Found NVIDIA GeForce GTX 1080 Ti "
     "which is too old to be supported by the triton GPU compiler, which is used as the backend. Triton only supports "
     "devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.1",
     {"gpu_name": "NVIDIA GeForce GTX 1080 Ti", "card_cc": "6.1"}),
    ("ptx-unsupported-toolchain", "https://github.com/MadryLab/trak/issues/68",
     "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.", {}),
    ("ptx-unsupported-toolchain", "https://github.com/Tiiny-AI/PowerInfer/issues/229",
     "CUDA error 222 at /home/test/test06/jdz/PowerInfer/ggml-cuda.cu:9635: the provided PTX was compiled with an "
     "unsupported toolchain.", {}),
    ("ptx-unsupported-toolchain", "https://github.com/NVIDIA-AI-IOT/Lidar_AI_Solution/issues/289",
     "CUDA Runtime error cudaEventCreate(&begin_) # the provided PTX was compiled with an unsupported toolchain., code = "
     "cudaErrorUnsupportedPtxVersion [ 222 ] in file /home/ubuntu/tensorRT/chapter8-learn-from-oss/Lidar_AI_Solution/"
     "CUDA-BEVFusion/src/common/timer.hpp:34", {}),
    ("gpu-fallen-off-bus", "https://github.com/NVIDIA/NVSentinel/issues/155",
     "note: this should duplicate `NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus`",
     {"pci": "PCI:0000:44:00", "xid": 79}),
    ("gpu-fallen-off-bus", "https://github.com/NVIDIA/NVSentinel/issues/155",  # the same driver, without an Xid
     "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
     "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
     "               NVRM: fallen off the bus and is not responding to commands.", {}),
    ("gpu-fallen-off-bus", "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/507",  # the title
     "GPU has fallen off of the bus", {}),
    ("nvidia-smi-device-handle-unknown", "https://github.com/xxd3vin/workspace/issues/19",
     "[root@bh174 chenyang]# nvidia-smi \nUnable to determine the device handle for GPU 0000:0B:00.0: Unknown Error",
     {"pci": "0000:0B:00.0", "nvml_error": "Unknown Error"}),
    ("nvidia-smi-device-handle-unknown", "https://github.com/pdbear/syno_nvidia_gpu_driver/issues/22",  # a Tesla P4
     "$ nvidia-smi\nUnable to determine the device handle for GPU0000:07:00.0: Unknown Error", {"pci": "0000:07:00.0"}),
    ("nvidia-smi-device-handle-unknown", "https://github.com/jamesstringer90/Easy-GPU-PV/issues/276",
     "Error: nvmlDeviceGetHandleByIndex(): Unknown Error", {"nvml_error": "Unknown Error"}),
    ("driver-too-old", "https://github.com/lllyasviel/Fooocus/issues/1313",
     "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by "
     "downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx",
     {"driver_cuda": "11.4"}),
    ("nvml-driver-library-mismatch", "https://github.com/NVIDIA/ubuntu-packaging-nvidia-driver/issues/3",
     "However, we often face the `Driver/library version mismatch`. Failed to initialize NVML: Driver/library version mismatch", {}),
    ("nvml-driver-library-mismatch", "https://github.com/lyulyul/shine-cluster/issues/30",
     "$ nvidia-smi\nFailed to initialize NVML: Driver/library version mismatch", {}),
    ("pip-cuda13-packages", "https://github.com/GoogleCloudPlatform/scientific-computing-examples/pull/157",
     "`torch 2.13.0` requires CUDA 13 and `nvidia-nccl-cu13` (NCCL 2.29+), which calls the new `ncclCommResume` C-symbol.",
     {"package": "nccl"}),
    # pip's own output in a public docker build log (the pitfall: https://github.com/facebookresearch/xformers/issues/1388)
    ("pip-cuda13-packages", "https://github.com/facebookresearch/xformers/issues/1388",
     "#9 1276.4 Downloading nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl (2.2 MB)",
     {"package13": "cuda_runtime"}),
    ("pip-torch-from-pypi-cu130", "https://github.com/pytorch/pytorch/pull/177975",  # pip output from a public build log
     "#11 20.82   Downloading torch-2.11.0-cp310-cp310-manylinux_2_28_x86_64.whl (530.6 MB)", {"torch_version": "2.11.0"}),
    # --- issue 24's classes: each quote from the thread or source named (verbatim; paths as posted) ---
    ("bnb-int8-matmul-unsupported", "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/118",
     "ERROR: Your GPU does not support Int8 Matmul!", {}),
    ("bnb-int8-matmul-unsupported", "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/118",
     "python: /mmfs1/gscratch/zlab/timdettmers/git/bitsandbytes/csrc/ops.cu:408: int igemmlt(cublasLtHandle_t, int, int, "
     "int, const int8_t*, const int8_t*, void*, float*, int, int, int) [with int FORMATB = 3; int DTYPE_OUT = 32; int "
     "SCALE_ROWS = 0; cublasLtHandle_t = cublasLtContext*; int8_t = signed char]: Assertion `false' failed.", {}),
    ("bnb-int8-slow-matmul", "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/main/bitsandbytes/diagnostics/cuda.py",
     "/usr/local/lib/python3.8/dist-packages/bitsandbytes-0.41.2-py3.8.egg/bitsandbytes/cuda_setup/main.py:166: UserWarning: "
     "WARNING: Compute capability < 7.5 detected! Only slow 8-bit matmul is supported for your GPU!                     "
     "If you run into issues with 8-bit matmul, you can try 4-bit quantization: "
     "https://huggingface.co/blog/4bit-transformers-bitsandbytes", {}),
    ("bnb-compiled-without-gpu", "https://github.com/LlamaChinese/Llama-Chinese/issues/123",
     "C:\\ProgramData\\anaconda3\\envs\\llama2\\lib\\site-packages\\bitsandbytes\\cextension.py:34: UserWarning: The "
     "installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit multiplication, and "
     "GPU quantization are unavailable.", {}),
    ("bnb-dispatched-cpu-or-disk",
     "https://github.com/huggingface/transformers/blob/main/src/transformers/quantizers/quantizer_bnb_8bit.py",
     "ValueError: Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit the "
     "quantized model. If you want to dispatch the model on the CPU or the disk while keeping these modules in 32-bit, "
     "you need to set `llm_int8_enable_fp32_cpu_offload=True` and pass a custom `device_map` to `from_pretrained`.", {}),
    ("nvcc-unsupported-gcc", "https://github.com/oobabooga/textgen/issues/3883",
     "#error -- unsupported GNU version! gcc versions later than 11 are not supported!", {"gcc_max": 11}),
    ("nvcc-unsupported-gcc", "https://github.com/Eyeline-Labs/FlashDepth/issues/2",
     "/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions later than "
     "12 are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check", {"gcc_max": 12}),
    ("exllamav2-ext-build-failed", "https://github.com/turboderp-org/exllamav2/pull/22",
     "RuntimeError: Error building extension 'exllamav2_ext'", {"extension": "exllamav2_ext"}),
    ("torch-extension-stale-lock", "https://github.com/ashawkey/torch-ngp/issues/42",
     '  File "/home/jiangpeng/anaconda3/envs/pytorch1/lib/python3.7/site-packages/torch/utils/file_baton.py", line 42, '
     "in wait\n    time.sleep(self.wait_seconds)\nKeyboardInterrupt", {}),
    ("torch-extension-stale-lock", "https://github.com/apache/tvm-ffi/issues/190",
     '  File "/usr/local/lib/python3.12/site-packages/torch/utils/file_baton.py", line 50, in wait', {}),
    ("exllamav2-single-digit-decode", "https://github.com/turboderp-org/exllamav2/issues/40",
     " ** Position     1 + 127 tokens:    1.1905 t/s", {"tok_s": "1.1905"}),
    ("ptxas-needs-sm80", "https://github.com/turboderp-org/exllamav3/issues/14",
     "ptxas /tmp/tmpxft_00003015_00000000-6_exl3_gemm.ptx, line 466427; error   : Feature 'cp.async' requires .target "
     "sm_80 or higher", {"feature": "cp.async", "min_cc": "8.0"}),
    ("ptxas-needs-sm80", "https://github.com/vllm-project/vllm/issues/1063",
     "Feature '.m16n8k16' requires .target sm_80 or higher", {"feature": ".m16n8k16"}),
    ("tabbyapi-exllamav3-needs-ampere", "https://github.com/theroyallab/tabbyAPI/blob/main/common/hardware.py",
     "RuntimeError: Unable to run ExllamaV3 because an unsupported GPU is found in this configuration. ", {}),
    ("vllm-fa-version-unsupported", "https://github.com/vllm-project/vllm/issues/52181",
     "(EngineCore pid=1686793) ERROR 08-13 17:50:27 [fa_utils.py:273] Cannot use FA version 2 is not supported due to "
     "FA2 is only supported on devices with compute capability >= 8", {"fa_version": 2}),
    ("vllm-fa-version-unsupported", "https://github.com/vllm-project/vllm/issues/15853",
     "ERROR 03-20 07:42:38 [utils.py:613] Cannot use FA version 2 is not supported due to FA3 is only supported on "
     "devices with compute capability >= 8 excluding 8.6 and 8.9 and Blackwell archs (>=10)", {"fa_version": 2}),
    ("cuda-driver-insufficient", "https://github.com/ollama/ollama/issues/7666",
     "ggml_cuda_init: failed to initialize CUDA: CUDA driver version is insufficient for CUDA runtime version", {}),
    ("cuda-driver-insufficient", "https://github.com/abetlen/llama-cpp-python/issues/1436",
     "CUDA error 35 at /home/conda/feedstock_root/build_artifacts/ggml-cuda.cu:493: CUDA driver version is insufficient "
     "for CUDA runtime version", {}),
    ("cuda-compat-unsupported-hw", "https://github.com/DeepVAC/TorchPod/issues/43",
     "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
     "calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on "
     "non supported HW (Triggered internally at  /opt/conda/conda-bld/pytorch_1623448278899/work/c10/cuda/CUDAFunctions.cpp:115.)",
     {}),
    ("cuda-compat-unsupported-hw", "https://github.com/NVIDIA/nvidia-docker/issues/1479",
     "ERROR: This container was built for NVIDIA Driver Release 450.51 or later, but\n"
     "       version 440.33.01 was detected and compatibility mode is UNAVAILABLE.", {}),
    ("cuda-compat-enabled", "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html",
     "NOTE: CUDA Forward Compatibility mode ENABLED.\n"
     "  Using CUDA 12.4 driver version 550.54.14 with kernel driver version 470.239.06.", {}),
    ("cudnn-version-incompatible", "https://github.com/pytorch/pytorch/pull/81881",
     "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 3, 2) but found runtime version "
     "(8, 0, 3). PyTorch already comes bundled with cuDNN.", {"built": "8, 3, 2", "found": "8, 0, 3"}),
    ("cudnn-version-incompatible", "https://github.com/pytorch/pytorch/issues/80637",
     "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (8, 3, 2) but linked against (8, 0, 3)",
     {"built": "8, 3, 2", "found": "8, 0, 3"}),
    ("cudnn-version-incompatible", "https://github.com/xingyizhou/CenterNet/issues/119",
     "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7605",
     {"built_int": 7102, "found_int": 7605}),
    ("dcgm-thermal-violation", "https://github.com/NVIDIA/DCGM/issues/270",
     "ERROR [1514002:1514004] [[Health]] Detected a WARNING in health system Thermal: 'Detected clocks event due to "
     "thermal violation in GPU 2. Verify that the cooling on this machine is functional", {"gpu_index": 2}),
    ("dcgm-thermal-violation-zero", "https://github.com/NVIDIA/DCGM/issues/242",
     "GPU 0 Thermal violations totaling 0.0 seconds started at 30.0 seconds into the test", {}),
    ("dcgm-thermal-violation", "https://github.com/stas00/ml-engineering",
     "| Warning | GPU 0 Thermal violations totaling 13.3 seconds started at 9.7 seconds into the test for GPU 0", {"seconds": "13.3"}),
    ("no-cuda-gpus-available", "https://github.com/jiaw-z/CoR-GS/issues/23",
     "    torch._C._cuda_init()\nRuntimeError: No CUDA GPUs are available", {}),
    ("hub-kernel-trust-offline", "https://github.com/huggingface/kernels/issues/553",  # quoted from this project's H200 run
     "ValueError: Kernel repository 'kernels-community/rotary' could not verify publisher trust status. Set "
     "trust_remote_code=True or add the repository ID to the trust_remote_code allowlist to allow loading kernels from "
     "untrusted sources.", {"repo": "kernels-community/rotary"}),
    ("uncorrectable-ecc-error", "https://github.com/NVIDIA/gpu-operator/issues/1146",
     "NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been "
     "detected on GPU in the framebuffer at physAddr 0x7fffa8860 partition 7, subpartition 1.", {}),
    ("xid-48", "https://github.com/NVIDIA/gpu-operator/issues/1146",
     "NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been "
     "detected on GPU", {"xid": 48, "pci": "PCI:0000:07:00"}),
    ("xid-64", "https://github.com/NVIDIA/gpu-operator/issues/1146",
     "NVRM: Xid (PCI:0000:07:00): 64, pid='<unknown>', name=<unknown>, Dynamic Page Retirement: Blacklisting failed.  "
     "Page should have been blacklisted on boot(0x00000000007fffa8).", {"xid": 64}),
    ("xid-13", "https://github.com/leptonai/gpud/pull/46",
     "NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): "
     "Illegal Instruction Parameter", {"xid": 13}),
    ("xid-31", "https://github.com/akash-network/support/issues/244",
     "NVRM: Xid (PCI:0000:00:07): 31, pid=2512125, name=python3.10, Ch 00000008, intr 00000000. MMU Fault: ENGINE "
     "GRAPHICS GPCCLIENT_T1_8 faulted @ 0x73ac_1c000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE", {"xid": 31}),
    ("xid-43", "https://github.com/akash-network/support/issues/244",
     "NVRM: Xid (PCI:0000:00:05): 43, pid=1045242, name=pt_main_thread, Ch 00000008", {"xid": 43}),
    ("xid-63", "https://github.com/stas00/ml-engineering",
     "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.",
     {"xid": 63}),
    ("xid-94", "https://github.com/akash-network/support/issues/244",
     "NVRM: Xid (PCI:0000:00:08): 94, pid='<unknown>', name=<unknown>, Contained: SM (0x1). RST: No, D-RST: No", {"xid": 94}),
    ("xid-94", "https://github.com/leptonai/gpud/pull/1174",
     "NVRM: Xid (PCI:0000:9b:00): 94, pid=1234, name=python3, Contained ECC error", {"xid": 94}),
    # no public V100 sample was found for 74 and 95: the NVRM prefix is the driver's, the codes from NVIDIA's catalogue
    ("xid-74", "https://docs.nvidia.com/deploy/xid-errors/index.html",
     "NVRM: Xid (PCI:0000:18:00): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error detected on link 2", {"xid": 74}),
    ("xid-95", "https://docs.nvidia.com/deploy/xid-errors/index.html",
     "NVRM: Xid (PCI:0000:18:00): 95, pid='<unknown>', name=<unknown>, Uncontained: FBHUB. RST: Yes, D-RST: No", {"xid": 95}),
    # llama.cpp and Ollama (doctor/knowledge/engine_signatures.py)
    ("llama-partial-offload", "https://github.com/ollama/ollama/issues/3711",
     "Apr 17 23:09:46 athena ollama.listener[2840147]: llm_load_tensors: offloaded 39/41 layers to GPU",
     {"gpu_layers": 39, "layers": 41}),
    ("ggml-no-cuda-arch", "https://github.com/ggml-org/llama.cpp/issues/15589",
     "common.cuh:112: ggml was not compiled with any CUDA arch <= 750", {"arch": 750}),
    ("ggml-cuda-op-failed", "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/210",
     "ggml_cuda_compute_forward: SCALE failed\nCUDA error: no kernel image is available for execution on the device",
     {"op": "SCALE"}),
    ("ggml-cuda-alloc-oom", "https://github.com/ggml-org/llama.cpp/issues/20431",
     "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: cudaMalloc failed: out of memory",
     {"size_mib": 144817.04, "device": 0}),
    ("ggml-buffer-alloc-failed", "https://github.com/ggml-org/llama.cpp/issues/20431",
     "alloc_tensor_range: failed to allocate CUDA0 buffer of size 151851674624", {"buffer": "CUDA0", "bytes": 151851674624}),
    ("llama-quant-v-needs-fa", "https://github.com/ggml-org/llama.cpp/issues/10378",
     "llama_new_context_with_model: V cache quantization requires flash_attn", {}),
    ("llama-quant-v-needs-fa", "https://github.com/ggml-org/llama.cpp/issues/28524",
     "failed to initialize the context: quantized V cache was requested, but this requires Flash Attention", {}),
    ("ollama-skipping-cuda-device", "https://github.com/ollama/ollama/issues/17841",
     "msg=\"skipping CUDA device — compute capability not in compiled architectures\"\n"
     "device=\"NVIDIA RTX A6000\" cc=860 archs=\"[750 890 1000 1200]\"", {"cc": 860, "archs": "750 890 1000 1200"}),
    ("ollama-no-gpu-library", "https://github.com/ollama/ollama/issues/10833",
     "time=2025-08-04T20:51:03.466+10:00 level=DEBUG source=server.go:291 msg=\"compatible gpu libraries\" compatible=[]", {}),
    ("ollama-skipping-cuda-device", "https://github.com/ollama/ollama/issues/17766",  # one line since 0.30 (Pascal)
     "level=INFO source=llama_server.go:299 msg=\"skipping CUDA device — compute capability not in compiled architectures\" "
     "device=\"Quadro P4000\" cc=610 archs=\"[750 800 860 870 890 900 1000 1030 1100 1200 1210]\" "
     "libDirs=\"[/usr/local/lib/ollama /usr/local/lib/ollama/cuda_v13]\"",
     {"cc": 610, "archs": "750 800 860 870 890 900 1000 1030 1100 1200 1210", "runner": "cuda_v13"}),
    ("ollama-cuda-driver-unloadable", "https://github.com/ollama/ollama/issues/6626",
     "time=2024-09-04T14:28:41.837+08:00 level=INFO source=gpu.go:568 msg=\"unable to load cuda driver library\" "
     "library=/usr/lib64/libcuda.so.460.106.00 error=\"symbol lookup for cuCtxCreate_", {"library": "/usr/lib64/libcuda.so.460.106.00"}),
    # issue 39: cuInit's CUresult in Ollama's discovery lines, each quoted from the issue named
    ("ollama-cuda-init-failure", "https://github.com/ollama/ollama/issues/5567",
     "msg=\"unable to load cuda driver library\" library=/usr/lib/x86_64-linux-gnu/libcuda.so.535.183.01 "
     "error=\"cuda driver library init failure: 802\"", {"cuda_error": 802}),
    ("ollama-cuda-init-failure", "https://github.com/ollama/ollama/issues/9031",
     "time=2025-02-19T04:44:23.228Z level=INFO source=gpu.go:612 msg=\"Unable to load cudart library "
     "/usr/lib/x86_64-linux-gnu/libcuda.so.570.86.15: cuda driver library init failure: 802\"", {"cuda_error": 802}),
    ("ollama-cuda-init-failure", "https://github.com/ollama/ollama/issues/5453",
     "time=2024-07-03T13:26:05.135+08:00 level=DEBUG source=gpu.go:517 msg=\"Unable to load nvcuda\" "
     "library=/usr/lib/x86_64-linux-gnu/libcuda.so.535.183.01 error=\"nvcuda init failure: 999\"", {"cuda_error": 999}),
    ("ollama-cuda-init-failure", "https://github.com/ollama/ollama/issues/5453", "cuInit err: 999", {"cuinit_error": 999}),
    ("ollama-cuda-init-failure", "https://github.com/ollama/ollama/issues/1877",
     "time=2024-03-11T13:14:33.744Z level=INFO source=gpu.go:249 msg=\"Unable to load CUDA management library "
     "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.14: nvml vram init failure: 999", {"cuda_error": 999}),
    # issue 35: Ollama's scheduler line, quoted from the answer in the thread named (rick-github, 2025-02-18)
    ("ollama-scheduler-offload", "https://github.com/ollama/ollama/issues/9181",
     "time=2025-02-18T02:29:51.627Z level=INFO source=server.go:130 msg=offload library=cuda layers.requested=-1 "
     "layers.model=81 layers.offload=44 layers.split=11,11,11,11 memory.available=\"[22.0 GiB 22.0 GiB 22.0 GiB 22.0 GiB]\" "
     "memory.gpu_overhead=\"0 B\" memory.required.full=\"127.4 GiB\" memory.required.partial=\"87.1 GiB\" "
     "memory.required.kv=\"19.5 GiB\"",
     {"layers": 81, "gpu_layers": 44, "kv_mib": 19968.0}),
    # issue 39: an architecture the engine does not know, each quoted from the thread or source named
    ("llama-unknown-architecture", "https://github.com/ollama/ollama/issues/15625",
     "llama_model_load: error loading model: error loading model architecture: unknown model architecture: 'qwen35moe'",
     {"architecture": "qwen35moe"}),
    ("llama-unknown-architecture", "https://github.com/unslothai/unsloth/pull/4790",
     "unknown model architecture: 'gemma4'", {"architecture": "gemma4"}),
    ("exllamav2-unknown-architecture", "https://github.com/turboderp-org/exllamav2/blob/v0.3.2/exllamav2/architecture.py",
     " !! Warning, unknown architecture: Qwen3NextForCausalLM", {"architecture": "Qwen3NextForCausalLM"}),
    ("vllm-unsupported-architecture", "https://github.com/vllm-project/vllm/issues/27314",
     "(APIServer pid=352089) Value error, Model architectures ['DeepseekOCRForCausalLM'] are not supported for now. "
     "Supported architectures: dict_keys(['ApertusForCausalLM', 'AquilaModel'])", {"architectures": "'DeepseekOCRForCausalLM'"}),
    ("ollama-inference-on-cpu", "https://github.com/ollama/ollama/issues/9496",
     "time=2025-03-05T11:57:30.901+10:00 level=INFO source=types.go:130 msg=\"inference compute\" id=0 library=cpu "
     "variant=\"\" compute=\"\" driver=0.0 name=\"\" total=\"31.9 GiB\" available=\"26.4 GiB\"", {"host_memory": "31.9 GiB"}),
    ("ollama-inference-on-cpu", "https://github.com/ollama/ollama/issues/16970",
     "time=2026-06-30T15:57:39.302+08:00 level=INFO source=types.go:50 msg=\"inference compute\" id=cpu library=cpu "
     "compute=\"\" name=cpu description=cpu libdirs=ollama driver=\"\" pci_id=\"\" type=\"\" total=\"15.8 GiB\"", {}),
    # issue 35: wordings the team had not seen, each quoted from the thread named
    ("ggml-no-device-code", "https://github.com/mozilla-ai/llamafile/issues/434",
     "ggml-cuda.cu:1412: ERROR: CUDA kernel vec_dot_q4_K_q8_1_impl_vmmq has no device code compatible with CUDA arch 600. "
     "ggml-cuda.cu was compiled for: 500,600,700,800,900",
     {"kernel": "vec_dot_q4_K_q8_1_impl_vmmq", "arch": 600, "compiled_for": "500,600,700,800,900"}),
    ("ggml-no-device-code", "https://github.com/nextcloud/llm2/issues/52",
     "/tmp/tmpd_qzn3c8/llama_cpp_python-0.3.6/vendor/llama.cpp/ggml/src/ggml-cuda/mmv.cu:53: ERROR: CUDA kernel "
     "mul_mat_vec has no device code compatible with CUDA arch 520. ggml-cuda.cu was compiled for: 520",
     {"kernel": "mul_mat_vec", "arch": 520}),
    ("ggml-kernel-image-invalid", "https://github.com/theroyallab/YALS/issues/23",
     "ggml_cuda_compute_forward: SCALE failed\nCUDA error: device kernel image is invalid", {}),
    ("ggml-kernel-image-invalid", "https://github.com/ollama/ollama/issues/16449",
     "Ollama v0.30.0 fails on Tesla V100: `CUDA error: device kernel image is invalid`", {}),
    ("llama-cpu-only-build", "https://github.com/ggml-org/llama.cpp/issues/9153",
     "warning: not compiled with GPU offload support, --gpu-layers option will be ignored", {}),
    ("llama-cpu-only-build", "https://github.com/ggml-org/llama.cpp/issues/22748",
     "[58713] warning: no usable GPU found, --gpu-layers option will be ignored", {}),
    ("llama-zero-layers-offloaded", "https://github.com/ollama/ollama/issues/12303",
     "offloaded 0/35 layers to GPU on gfx1103", {"layers": 35}),
    ("ggml-cuda-init-failed", "https://github.com/abetlen/llama-cpp-python/issues/1890",
     "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected",
     {"cuda_error": "no CUDA-capable device is detected"}),
    ("lmstudio-no-cuda-gpus", "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1758",
     "CUDA runtime versions (v2.10.0, v2.11.0) report \"No supported Cuda GPUs found on device\"", {}),
    ("lmstudio-no-cuda-gpus", "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/197",
     "GPU - Error trying to query CUDA gpus: No CUDA devices found!", {"cuda_error": "No CUDA devices found"}),
    ("ollama-no-compatible-gpus", "https://github.com/claraverse-space/ClaraVerse/issues/49",
     "time=2025-04-29T20:11:09.132Z level=INFO source=gpu.go:377 msg=\"no compatible GPUs were discovered\"", {}),
    ("ollama-driver-too-old", "https://github.com/ollama/ollama/issues/16415",
     "msg=\"NVIDIA driver too old\" device=\"NVIDIA GeForce GTX 1070 Ti\" compute=6.1 driver=535 "
     "required_driver=\"570 or newer\"", {"card_cc": "6.1", "driver": 535, "required_driver": "570 or newer"}),
    ("vllm-cc-below-7", "https://github.com/vllm-project/vllm/issues/463",
     "RuntimeError: GPUs with compute capability less than 7.0 are not supported.", {}),
    ("vllm-gemma2-soft-cap", "https://github.com/vllm-project/vllm/issues/7060",
     "ValueError: Please use Flashinfer backend for models with logits_soft_cap (i.e., Gemma-2). Otherwise, the output "
     "might be wrong. Set Flashinfer backend by export VLLM_ATTENTION_BACKEND=FLASHINFER.", {}),
    ("vllm-gemma2-soft-cap", "https://github.com/vllm-project/vllm/issues/9922",
     "ValueError: XFormers does not support attention logits soft capping for GPU Quadro RTX 4000", {}),
    ("libcudart-missing", "https://github.com/vllm-project/vllm/issues/1738",
     "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory",
     {"library": "libcudart.so.12", "cuda_major": 12}),
    ("hf-trainer-bf16-needs-ampere", "https://github.com/tatsu-lab/stanford_alpaca/issues/133",
     "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0", {}),
    ("bnb-4bit-float32-compute", "https://github.com/bigcode-project/bigcode-evaluation-harness/issues/192",
     "UserWarning: Input type into Linear4bit is torch.float16, but bnb_4bit_compute_dtype=torch.float32 (default). "
     "This will lead to slow inference or training speed.", {}),
    ("ggml-cuda-init-failed", "https://github.com/ggml-org/llama.cpp/issues/6184",
     "ggml_cuda_init: no CUDA devices found, CUDA will be disabled", {}),
    ("ollama-driver-too-old", "https://github.com/ollama/ollama/issues/6604",
     "time=2024-09-03T16:36:00.853+08:00 level=DEBUG source=gpu.go:537 msg=\"Unable to load cudart\" "
     "library=C:\\Users\\asus\\AppData\\Local\\Programs\\Ollama\\lib\\ollama\\cudart64_12.dll error=\"your nvidia "
     "driver is too old or missing.  If you have a CUDA GPU please upgrade to run ollama\"", {}),
    ("ggml-cuda-alloc-oom", "https://github.com/ollama/ollama/issues/9782",
     "Error: llama runner process has terminated: cudaMalloc failed: out of memory", {}),
    ("hf-trainer-bf16-needs-ampere", "https://github.com/lm-sys/FastChat/issues/1191",
     "ValueError: --tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7", {}),
    ("bnb-named-symbol-not-found", "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/382",
     "Error named symbol not found at line 116 in file bitsandbytes/csrc/ops.cu", {"file": "bitsandbytes/csrc/ops.cu"}),
    ("ollama-scheduler-offload", "https://github.com/ollama/ollama/issues/10823",
     "time=2025-05-22T17:59:04.662-07:00 level=INFO source=server.go:168 msg=offload library=cuda layers.requested=-1 "
     "layers.model=63 layers.offload=49 layers.split=\"\" memory.available=\"[17.8 GiB]\" memory.gpu_overhead=\"0 B\" "
     "memory.required.full=\"23.4 GiB\" memory.required.partial=\"17.8 GiB\" memory.required.kv=\"944.0 MiB\"",
     {"layers": 63, "gpu_layers": 49, "requested": "-1", "kv_mib": 944.0}),
]


def scan_text(text: str, **kw):
    source = open_log("-", stdin=io.BytesIO(text.encode("utf-8")))
    return Scanner(**kw).scan(source)


@pytest.mark.parametrize("signature,url,text,numbers", CASES, ids=[f"{c[0]}@{c[1].split('github.com/')[-1]}" for c in CASES])
def test_signature_on_quoted_text(signature, url, text, numbers):
    result = scan_text(text)
    found = {m.signature: m for m in result.matches}
    assert signature in found, f"{signature} did not match the text quoted from {url}"
    match = found[signature]
    for key, value in numbers.items():
        assert match.numbers.get(key) == value, (key, match.numbers)
    sig = by_id(signature)
    assert any(any(a in line.lower() for a in sig.anchors) for line in text.splitlines() if sig.regex.search(line))


def test_every_signature_is_tested_on_a_quote():
    assert {s.id for s in LOG_SIGNATURES} == {c[0] for c in CASES}


def test_rows_left_out_of_logs_serve_the_probe():
    """A row `explain` never reads must name a probe failure kind, or it serves nothing."""
    probe_only = [s for s in SIGNATURES if not s.in_logs]
    assert probe_only and all(s.probe_kind in PROBE_KINDS for s in probe_only)
    assert not any(s.id in {x.id for x in LOG_SIGNATURES} for s in probe_only)


def test_every_probe_kind_has_a_row():
    assert {s.probe_kind for s in SIGNATURES if s.probe_kind} == set(PROBE_KINDS)


@pytest.mark.parametrize("text", [
    "Successfully installed torch-2.11.0+cu126 torchvision-0.26.0+cu126",  # a cu126 wheel still has sm_70
    "Successfully installed torch-2.11.0+cpu torchvision-0.26.0+cpu",
    "Successfully installed torch-2.10.0",
    "[pip3] nvidia-ml-py==13.580.82",  # the NVML bindings, not a CUDA 13 runtime
    "train.py: error: unrecognized arguments: --queries-offline 20",  # a wrong flag, not a split path
    "INFO:     Loading model: /home/derp/exl2-models/llama-3-8B-iterative-DPO-final-exl2",
    " ** Position   128 + 128 tokens:   20.3362 t/s",  # a V100's healthy EXL2 speed, not a crawl
    # Ollama using the card (its test's cuda1 case): library=cuda, not cpu
    "time=2025-07-01T19:33:43.162Z level=INFO source=types.go:130 msg=\"inference compute\" "
    "id=GPU-452cac9f-6960-839c-4fb3-0cec83699196 library=cuda variant=v12 compute=6.1 driver=12.7 name=\"NVIDIA GeForce GT 1030\"",
])
def test_lookalike_lines_do_not_match(text):
    assert scan_text(text).matches == ()


def test_the_table_is_well_formed():
    ids = [s.id for s in SIGNATURES]
    assert len(ids) == len(set(ids))
    kebab = r"^[a-z0-9]+(-[a-z0-9]+)*$"
    import re

    for s in SIGNATURES:
        assert re.match(kebab, s.id) and all(re.match(kebab, c) for c in s.checks), s.id
        assert s.severity in SEVERITIES and s.confidence in ("P", "S"), s.id
        assert s.source.startswith(("https://github.com/", "https://docs.nvidia.com/")), s.id
        assert s.fix and s.title, s.id
        assert all(a == a.lower() and a for a in s.anchors), s.id
        assert s.rules_out_on_pass or s.pass_note, f"{s.id}: say what a passing check leaves open"
    for h in PLAN_HINTS:
        assert h.anchor == h.anchor.lower()


def test_one_line_with_two_overlapping_oom_messages_is_one_match():
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of "
            "15.77 GiB of which 52.19 MiB is free.")
    assert [m.signature for m in scan_text(text).matches] == ["cuda-oom"]
