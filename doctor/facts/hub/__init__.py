"""Hugging Face Hub facts: a model id found the way huggingface_hub finds it, its quantized versions, quiet logs."""
