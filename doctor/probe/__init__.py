"""The ExLlamaV2 probe: a short, properly timed generation in a child process, measured against the card.

Why a child: a CUDA crash, an out-of-memory, a hang or ExLlamaV2's ~150 s first-time JIT build
must never take the doctor (or its TUI) down. The parent (runner.py) owns the timeouts, the
cancel (it kills the child's whole process group) and the NVML sampler; the child (worker.py)
only measures and speaks JSON lines.

Event protocol (version 1), one JSON object per line on the worker's stdout; the runner hands
each event, as a dict, to its `on_event` callback unchanged (plus a "t_s" it adds: seconds
since the worker started):

  {"event": "phase",    "phase": P, "message": "...", "total": N|null}
        a new phase began; P is one of protocol.PHASES: start (with "protocol" and "pid"),
        import, build (the JIT build, with "build_dir"), bandwidth, load, prefill, warmup,
        decode, unload and reload (an independent second load), streams, done. The synthetic-model
        child (synthetic.py) speaks the same protocol with the phase "synthetic".
        "total" is the size of the phase's progress measure when it has one.
  {"event": "progress", "phase": P, "done": n, "total": N|null, "unit": "tokens"|"modules"|"objects"|"bytes",
        "message": "..."}
  {"event": "sample",   "phase": P, "pass": k, "run": i, "tokens": n, "tok_s": x, "cpu_wall": r,
        "faults_per_token": f}
        one decode chunk or timed run as the worker measured it (tok/s for a live sparkline).
  {"event": "mode",     "engine": "exllamav2 0.3.2", "mode": "paged"|"unpaged", "mode_why": "...",
        "context_per_stream": n, "cache_mode": "q4"}
        `probe --streams` (exl2_streams.py): how ExLlamaV2's dynamic generator will run the jobs, and why; its
        rounds are samples with "streams": N and "round": {...StreamsRound...}, its phases warmup and streams.
  {"event": "result",   "summary": "one line", "result": {...ProbeResult...}}  (exl2_streams.py: StreamsProbe)
  {"event": "error",    "kind": K, "phase": P, "message": "one line", "detail": "log tail or traceback"}
        K is one of ERROR_KINDS: the runner maps it to a finding (see failures.py).
The runner itself adds {"event": "cancelled"} and {"event": "timeout", "phase": P} when it
stops the worker, so a UI folding events sees every ending.

Results are plain dataclasses (results.py) so they serialize into Report.probe; the verdict
(doctor/verdict/build.py) is computed from them in the parent. stage.after_checks() is the one entry
point for the CLI and the TUI: it runs the probe when it can, or says why not.
"""
