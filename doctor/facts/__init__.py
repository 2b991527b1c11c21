"""Gatherers: the only code that reads the machine, the model directory or a saved report.

Each returns fact types from doctor.model and never raises for what it finds broken.

    gather.py    gather(): live Facts, the slow torch child first so it overlaps the rest
    source.py    a Source (live, a saved report, a bundle, an example) resolved once
    replay.py    the one reader of a saved report, facts fixture or ticket bundle
    archive.py, fleet_reader.py, examples.py   bundles, a fleet's reports, the recorded examples
    children.py  every child process the gatherers start, so an interrupt can stop them all
    nvml/        the one NVML reader; sampling/ reads it each tick for the probe and `watch`
    python/      packages on the kernel path, and torch (statically or in a child)
    host/        OS, CPU, memory, WSL2/container/cuda-compat, the identities to redact
    engines/     installed engines, launch lines and configs, running servers, the JIT build cache
    modeldir/    a model directory's config.json, quantization, safetensors and GGUF headers
    hub/         a Hugging Face model id, its quantized versions, huggingface_hub kept quiet
    catalogue/   the embedded model catalogue: popular models' configs, so `plan ORG/NAME` answers offline
    files/       bounded reads (YAML, logs, regular files) and the one atomic writer
"""
