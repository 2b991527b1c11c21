"""The user-facing fix sentences that more than one part of the doctor prints, each written once.

Like flutter doctor's user_messages: a log signature, a check and a failed probe that meet the same pitfall give
the same advice in the same words. A sentence used in one place only stays beside its code.
"""

from __future__ import annotations

# The GPU ran out of memory: log signatures (every OOM wording), and a probe that could not load the model.
OOM_FIX = ("Lower max_seq_len, quantize the cache (Q8/Q4), use a smaller bpw, or free the GPU; `v100-doctor --model DIR "
           "--max-seq-len N` shows the largest context that fits for each cache mode.")

# What the timed probe needs besides torch: exllamav2, and tokenizers (ExLlamaV2 0.3 needs it but does not declare it).
PROBE_ENGINE_INSTALL = "pip install exllamav2 tokenizers"

# ExLlamaV2 could not read the model folder: the log signature and a probe that could not load it.
MODEL_FOLDER_FIX = ("ExLlamaV2 needs config.json, tokenizer.json and *.safetensors in one folder; square brackets in the "
                    "folder name break its *.safetensors glob.")

# A JIT build of ExLlamaV2's CUDA extension failed: the log signature and a probe that could not import it.
JIT_BUILD_FIX = ("The JIT build needs nvcc of the same CUDA major version as torch, able to target this card (CUDA 13 "
                 "cannot build for sm_70), plus ninja.")

# NVML hung or crashed partway through a sampling window (`watch`, the probe's sampler): gpu-present's fix, the same
# cause as a snapshot whose NVML child hung or crashed (doctor/facts/nvml/isolated.py words those reasons).
NVML_STOPPED_FIX = ("The NVIDIA driver stopped answering while the GPU was read: a GPU in a bad state or a driver fault, "
                    "not a setting. Run nvidia-smi (if it hangs too, the driver is stuck) and look in the kernel log for "
                    "Xid errors; a GPU reset (nvidia-smi -r, with nothing running on the GPU) or a reboot usually clears "
                    "a hang; a crash inside libnvidia-ml.so after a driver update needs a reboot or a driver reinstall.")
NVML_STOPPED_COMMANDS = ("nvidia-smi", "journalctl -k | grep -i xid")
