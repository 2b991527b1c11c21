"""`engine-build`: the CUDA architectures the engine's own libraries (llama.cpp's, Ollama's runners) were built for,
against the card; the adapter says where they are and how its users rebuild them.

Read from the ggml CUDA library's fat binary (doctor/facts/engines/installed.py), never by loading it: a build without code
for the card fails at load with "ggml was not compiled with any CUDA arch <= 70" (llama.cpp) or is skipped by Ollama.
"""

from __future__ import annotations

from checks.base import Check, CheckContext
from doctor.knowledge.engines import runs_on
from doctor.model.engines import SERVER_ENGINE, CudaLibrary
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.unknown import known

CUDA13_NOTE = ("CUDA 13 cannot build for sm_70 or older (https://github.com/mudler/LocalAI/issues/9948), so a CUDA-13 "
               "release of llama.cpp has no code for this card")


def archs(lib: CudaLibrary) -> str:
    cub = ", ".join(f"sm_{a}" for a in lib.cubins) if known(lib.cubins) else "?"
    ptx = ", ".join(f"compute_{a}" for a in lib.ptx) if known(lib.ptx) and lib.ptx else ""
    return cub + (f" + PTX {ptx}" if ptx else "")


def serving_url(ctx: CheckContext) -> str:
    """The URL of the running server of the engine judged, where --engine-url or watch --engine-url read one."""
    engine = ctx.engine.engine
    server = ctx.plan.engine_server
    if server is not None and server.engine == engine and server.local:
        return server.url
    watched = ctx.facts.samples.server if ctx.facts.samples is not None else None
    if watched is not None and SERVER_ENGINE.get(watched.kind) == engine:
        return watched.url
    return ""


def run(ctx: CheckContext) -> Finding:
    a, engine = ctx.adapter, ctx.engine.engine
    card = ctx.card()
    if card is None:
        return CHECK.finding(Status.SKIP, "skipped: the card's compute capability is unknown")
    cc, name, planned = card
    if ctx.engine.assumed:
        return CHECK.finding(Status.SKIP, f"skipped: {ctx.engine.why}")
    build = None if planned else a.cuda_build(ctx.facts)
    if build is None:
        why = (f"planning for {name}" if planned else
               f"{a.label}'s kernels come with its Python package and torch: cuda-pairing and the engine check judge them"
               if ctx.facts.engines is not None or a.uses_torch else
               "these facts hold no engine readings (recorded before issue 27)")
        return CHECK.finding(Status.SKIP, f"skipped: no {a.label} CUDA libraries to read ({why})")
    if not build.installed:
        if served := serving_url(ctx):  # it runs here, from a build the doctor was not shown
            return CHECK.finding(Status.SKIP, f"skipped: {a.label} serves at {served} from a build not found on PATH, so "
                                 "its CUDA libraries were not read: run the doctor with the folder of its binary on PATH "
                                 "to have them checked")
        return CHECK.finding(Status.SKIP, f"skipped: {a.label} is not installed here (nothing on PATH, no llama-cpp-python)")
    fix, commands = a.rebuild_for_card(cc, ctx.facts)
    owner = build.owner or a.label
    if not build.libraries and build.not_cuda:  # a runtime that runs the card without CUDA code of its own
        return CHECK.finding(Status.PASS, f"{build.not_cuda}; it runs on {name} (cc {cc})", {"engine": str(engine)})
    if not build.libraries:
        return CHECK.finding(Status.FAIL, f"{build.what} is installed but no ggml CUDA library was found beside it: a CPU-only "
                             "build runs every layer on the CPU, whatever the card", {"engine": str(engine)}, fix, commands)
    rows: list[dict[str, str | None]] = []
    ok = []
    for lib in build.libraries:
        if not known(lib.cubins):
            rows.append({"library": lib.path, "runner": lib.runner, "unreadable": lib.cubins.reason})
            continue
        how = runs_on(lib.cubins, lib.ptx if known(lib.ptx) else (), cc)
        rows.append({"library": lib.path, "runner": lib.runner, "archs": archs(lib), "runs_as": how})
        if how:
            ok.append((lib, how))
    ev = {"engine": str(engine), "cc": cc, "libraries": rows}
    if ok:
        lib, how = ok[0]
        where = f"{owner}'s {lib.runner}{' ' + build.runner_word if build.runner_word else ''}" if lib.runner else lib.path
        jit = " (first load JIT-compiles the PTX: slow once, cached after)" if "PTX" in how else ""
        return CHECK.finding(Status.PASS, f"{where} was built for {archs(lib)}: runs on {name} as {how}{jit}", ev)
    if any("unreadable" in r for r in rows) and not any(r.get("archs") for r in rows):
        return CHECK.finding(Status.WARN, "the ggml CUDA libraries could not be read: " + "; ".join(str(r["unreadable"]) for r in rows), ev)
    sm = cc.replace(".", "")
    if any(lib.runner for lib in build.libraries):  # Ollama's runners, LM Studio's runtimes: the card skipped, CPU
        kind = f"CUDA {build.runner_word}s" if build.runner_word else "CUDA runtimes"
        return CHECK.finding(Status.FAIL, f"none of {owner}'s {kind} has code for {name} (cc {cc}): "
                             + "; ".join(f"{r['runner']}: {r.get('archs', '?')}" for r in rows)
                             + f"; {owner} skips the card and runs on the CPU", ev, fix, commands)
    return CHECK.finding(Status.FAIL, f"{a.label}'s CUDA library was built for {archs(build.libraries[0])} only: it stops with "
                         f"\"ggml was not compiled with any CUDA arch <= {sm}0\" on {name} (cc {cc}). "
                         f"{CUDA13_NOTE if int(sm) <= 70 else ''}".rstrip(), ev, fix, commands)


CHECK = Check(id=CheckId("engine-build"), title="The engine's CUDA build vs this card", run=run,
              depends_on=(CheckId.COMPUTE_CAPABILITY,), blocked_by=(Status.ERROR,), order=20)
