"""Machine facts: one immutable snapshot, gathered live or loaded from a saved report."""

from doctor.facts.types import (  # noqa: F401
    Facts,
    GpuFacts,
    GpuProcess,
    HostFacts,
    NvccFacts,
    NvmlFacts,
    PythonFacts,
    TorchFacts,
)
