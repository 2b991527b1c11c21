"""Runtime sampling: one NVML + psutil sampler thread and its time series (summarised by doctor.model.sample_summary).

Use it around any timed work (the probe does):

    from doctor.facts.sampling import start
    sampler = start([0], pids=[child.pid], hz=5)
    ...                      # the work being watched
    series = sampler.stop()  # a SampleSeries; put it in Facts.samples

The sampler is imported lazily so that doctor.model.facts can import the series types
without pulling in NVML or psutil.
"""

from __future__ import annotations

from typing import Any

from doctor.model.samples import SampleSeries

__all__ = ["SampleSeries", "Sampler", "start"]


def __getattr__(name: str) -> Any:
    if name in ("Sampler", "start"):
        from doctor.facts.sampling import sampler

        return getattr(sampler, name)
    raise AttributeError(name)
