"""Environment checks: the GPU and its driver, its compute capability, the CUDA pairing, flash-attn."""
