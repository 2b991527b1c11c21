"""The verdict's data: what the report stores and the renderers draw. Computed in doctor/verdict/."""

from __future__ import annotations

from dataclasses import dataclass, field

from doctor.model.ids import CauseId


@dataclass(frozen=True)
class Cause:
    id: CauseId | str  # a CauseId; plain text only when read from a newer doctor's report
    title: str
    lost_ms: float | None  # per token; None: present but not estimable from the evidence
    share: float | None = None  # of the gap, 0..1 (set by the verdict)
    evidence: dict = field(default_factory=dict)
    sentence: str = ""  # the evidence in words, for the one-sentence headline
    estimated: bool = True  # every share is an estimate; the evidence figures are measured unless said


# short labels for bars (the TUI's verdict panel): data beside the type, so a renderer draws them without the
# verdict's code; every cause id doctor/verdict/causes.py can emit has one (tests/doctor/model/test_cause_labels.py)
CAUSE_LABELS = {CauseId.KV_READS: "KV cache reads", CauseId.THROTTLED_CLOCKS: "throttled clocks",
                CauseId.CPU_OFFLOAD: "CPU offload", CauseId.HOST_BOUND: "host-bound", CauseId.LAUNCH_BOUND: "launch-bound",
                CauseId.KERNEL_PATH: "kernel path", CauseId.GPU_CONTENTION: "other GPU procs",
                CauseId.UNEXPLAINED: "unexplained"}


class NoCeiling(ValueError):
    """Neither the knowledge base nor a measurement gives this card's bandwidth: no ceiling to compare with."""


@dataclass(frozen=True)
class BytesPerToken:
    weights: float  # bytes of weights on the GPU (read once per token) plus one embedding row
    kv_read: float  # KV bytes read per token at `context`
    offloaded: float  # bytes crossing PCIe per token
    context: int
    cache_mode: str
    source: str

    @property
    def total(self) -> float:
        return self.weights + self.kv_read + self.offloaded


@dataclass(frozen=True)
class Ceiling:
    bandwidth_gbs: float
    tok_s: float  # at the probe's context (weights + KV)
    tok_s_weights_only: float  # at zero context: the reference story's arithmetic
    source: str


@dataclass(frozen=True)
class Fix:
    cause: str
    action: str
    expected_gain_tok_s: float | None  # None: not estimable from the evidence
    basis: str


@dataclass(frozen=True)
class MissingEvidence:
    """Evidence the verdict lacks to explain a gap, and the exact command that collects it."""

    what: str
    command: str


@dataclass(frozen=True)
class Verdict:
    measured_tok_s: float
    spread_pct: float
    bytes: BytesPerToken
    datasheet: Ceiling | None
    measured: Ceiling | None
    ceiling_tok_s: float
    efficiency: float
    near_ceiling: bool
    lost_ms_per_token: float
    causes: tuple[Cause, ...]
    headline: str
    fixes: tuple[Fix, ...] = ()
    set_aside: tuple[str, ...] = ()
    unsettled: str = ""  # the reported pass never settled: its spread and the measured cause (no median claimed)
    shifted: str = ""  # it settled only after runs at another pace: how far, and the measured cause
    first_use: str = ""  # a per-context-length first-use cost seen in the warm-up (never counted as the speed)
    reference: str = ""
    notes: tuple[str, ...] = ()
    gpu: str = ""
    options: tuple[Fix, ...] = ()  # at the card's limit: levers with a trade-off, offered as choices, not as a fix
    missing_evidence: tuple[MissingEvidence, ...] = ()  # when most of the gap is unexplained

    @property
    def top_cause(self) -> Cause | None:
        """The named cause with the largest share ("unexplained" is never a cause)."""
        named = [c for c in self.causes if c.share and c.id != CauseId.UNEXPLAINED]
        return max(named, key=lambda c: c.share or 0.0) if named else None

    @property
    def unexplained(self) -> float:
        return next((c.share or 0.0 for c in self.causes if c.id == CauseId.UNEXPLAINED), 0.0)
