"""What the concurrency probe measured (`probe --streams 1,2,4`): at each stream count, N requests started together,
each streamed; total and per-stream decode speed and time to first token. Against a running server (--engine-url),
or in the engine in force, driven by the doctor itself: ExLlamaV2's dynamic generator with N jobs enqueued together
(doctor/probe/exl2_streams.py). Judged by doctor/verdict/streams.py (batched, queued, or failing), kept in
Report.probe.streams."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StreamTiming:
    """One request of a round: when its first and last token came (seconds after the round started)."""

    tokens: int
    ttft_s: float  # the first streamed token
    end_s: float  # the last one
    error: str = ""

    @property
    def decode_tok_s(self) -> float:
        """Its own decode speed: the tokens after the first over the time between the first and the last."""
        span = self.end_s - self.ttft_s
        return (self.tokens - 1) / span if self.tokens > 1 and span > 0 else 0.0


@dataclass(frozen=True)
class StreamsRound:
    """N concurrent streams. total: every decoded token (after each stream's first) over the time from the first
    first-token to the last token; per stream: the median of the streams' own decode speeds."""

    streams: int
    requests: tuple[StreamTiming, ...]
    total_tok_s: float
    per_stream_tok_s: float
    slowest_stream_tok_s: float
    ttft_median_s: float
    ttft_max_s: float
    failed: int = 0
    # repeated until the totals settled (the timing probe's rule, doctor/probe/more_runs.py): the figures above are
    # the medians over the last `window` repeats; a report from before repeats ran each round once (these defaults)
    repeats: int = 1  # how many times the round ran
    totals_tok_s: tuple[float, ...] = ()  # each repeat's total, in the order run
    window: int = 0  # the last this many repeats are the ones the medians are over
    spread_pct: float = 0.0  # (max - min) / median of those repeats' totals
    unsettled: str = ""  # the totals never settled within the time budget: how far apart, and that the medians are uncertain

    @property
    def kept_totals(self) -> tuple[float, ...]:
        """The totals the medians are over (the round's one total in a report from before repeats)."""
        return self.totals_tok_s[-self.window:] if self.window and self.totals_tok_s else (self.total_tok_s,)

    @property
    def total_low(self) -> float:
        return min(self.kept_totals)

    @property
    def total_high(self) -> float:
        return max(self.kept_totals)

    def spread_said(self) -> str:
        """The repeats in a few words ("" for a round run once): its totals' range and how many repeats ran."""
        if self.repeats <= 1:
            return ""
        kept = f"{self.window} of {self.repeats}" if self.window != self.repeats else f"{self.repeats}"
        return (f" (median of {kept} repeats, totals {self.total_low:g}-{self.total_high:g}"
                + (", unsettled)" if self.unsettled else ")"))


def rounds_said(rounds: tuple[StreamsRound, ...], measured_only: bool = True) -> str:
    """The rounds in one line, for the probe's summary: each total and per-stream speed, and the repeats' spread."""
    return "; ".join(f"{r.streams} streams: {r.total_tok_s:g} tok/s in total, {r.per_stream_tok_s:g} each{r.spread_said()}"
                     for r in rounds if r.total_tok_s > 0 or not measured_only)


@dataclass(frozen=True)
class StreamsProbe:
    url: str  # the server's (--engine-url); "" when the doctor drove the engine itself (`engine`)
    api: str  # "/v1/completions" | "/api/generate"; "" for an engine driven in-process
    model: str
    tokens: int  # asked per request
    rounds: tuple[StreamsRound, ...] = ()
    error: str = ""  # the one line when it could not run; rounds keep what was measured before
    seconds: float = 0.0
    engine: str = ""  # "" a server at `url`; else the engine the doctor drove, e.g. "exllamav2 0.3.2"
    mode: str = ""  # how that engine ran the streams: "paged" (batched) | "unpaged" (one job at a time)
    mode_why: str = ""  # why that mode: what decided it (flash-attn, the card), in one sentence
    context_per_stream: int = 0  # tokens of context each stream had room for (the cache sized N x this when paged)
    cache_mode: str = ""  # the KV cache the engine ran with (fp16, q8, q6, q4)
    bad_input: bool = False  # the error is the user's input to fix (a cache mode the engine refuses): exit 3
    compute_capability: str = ""  # the card the driven engine ran on ("9.0"): whether flash-attn could page there

    @property
    def driven(self) -> bool:
        """The doctor started the engine itself (a model it loaded), rather than asking a running server."""
        return bool(self.engine)
