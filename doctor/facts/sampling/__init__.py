"""Runtime sampling: one NVML + psutil sampler thread and its time series (summarised by doctor.model.sample_summary).

Use it around any timed work (the probe does):

    from doctor.facts.sampling import start
    sampler = start([0], pids=[child.pid], hz=5)
    ...                      # the work being watched
    series = sampler.stop()  # a SampleSeries; put it in Facts.samples
"""

from __future__ import annotations

from doctor.facts.sampling.sampler import Sampler, start
from doctor.model.samples import SampleSeries

__all__ = ["SampleSeries", "Sampler", "start"]
