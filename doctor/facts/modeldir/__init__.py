"""Model-directory facts: config.json, quantization, safetensors and GGUF headers, read from headers only."""
