"""Host facts: OS, CPU and memory, where the doctor runs (WSL2, container, cuda-compat), and the identities to redact."""
