"""What the concurrency probe measured (`probe --streams 1,2,4 --engine-url URL`): at each stream count, N requests
started together against the running server, each streamed; total and per-stream decode speed and time to first
token. Judged by doctor/verdict/streams.py (batched, queued, or failing), kept in Report.probe.streams."""

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


@dataclass(frozen=True)
class StreamsProbe:
    url: str
    api: str  # "/v1/completions" | "/api/generate"
    model: str
    tokens: int  # asked per request
    rounds: tuple[StreamsRound, ...] = ()
    error: str = ""  # the one line when it could not run; rounds keep what was measured before
    seconds: float = 0.0
