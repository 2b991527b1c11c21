"""ExLlamaV2 0.3 needs tokenizers; the worker checks it is importable. Nothing else is used."""
