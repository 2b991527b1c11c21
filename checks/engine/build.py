"""`engine-build`: the CUDA architectures the installed llama.cpp or Ollama libraries were built for, against the card.

Read from the ggml CUDA library's fat binary (doctor/facts/engines.py), never by loading it: a build without code
for the card fails at load with "ggml was not compiled with any CUDA arch <= 70" (llama.cpp) or is skipped by Ollama.
"""

from __future__ import annotations

from checks.base import Check, CheckContext
from doctor.knowledge.engines import engine_support, runs_on
from doctor.model.engines import CudaLibrary
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId, Engine
from doctor.model.unknown import known

CUDA13_NOTE = ("CUDA 13 cannot build for sm_70 or older (https://github.com/mudler/LocalAI/issues/9948), so a CUDA-13 "
               "release of llama.cpp has no code for this card")


def archs(lib: CudaLibrary) -> str:
    cub = ", ".join(f"sm_{a}" for a in lib.cubins) if known(lib.cubins) else "?"
    ptx = ", ".join(f"compute_{a}" for a in lib.ptx) if known(lib.ptx) and lib.ptx else ""
    return cub + (f" + PTX {ptx}" if ptx else "")


def run(ctx: CheckContext) -> Finding:
    engine = ctx.engine.engine
    if engine not in (Engine.LLAMA_CPP, Engine.OLLAMA):
        return CHECK.finding(Status.SKIP, f"skipped: the plan's engine is {engine}, not llama.cpp or Ollama")
    card = ctx.card()
    if card is None:
        return CHECK.finding(Status.SKIP, "skipped: the card's compute capability is unknown")
    cc, name, planned = card
    e = ctx.facts.engines
    if planned or e is None:
        why = f"planning for {name}" if planned else "these facts hold no engine readings (recorded before issue 27)"
        return CHECK.finding(Status.SKIP, f"skipped: no {engine} installation was read ({why})")
    libs = e.llama_cpp.cuda_libraries if engine == Engine.LLAMA_CPP else e.ollama.cuda_libraries
    installed = e.llama_cpp.installed if engine == Engine.LLAMA_CPP else e.ollama.installed
    if not installed:
        return CHECK.finding(Status.SKIP, f"skipped: {engine} is not installed here (nothing on PATH, no llama-cpp-python)")
    if not libs:
        return CHECK.finding(Status.WARN, f"{engine} is installed but no ggml CUDA library was found beside it: a CPU-only "
                             "build runs every layer on the CPU", {"engine": str(engine)},
                             "Install a CUDA build (llama.cpp: cmake -DGGML_CUDA=ON; llama-cpp-python: CMAKE_ARGS=\"-DGGML_CUDA=on\")")
    rows: list[dict[str, str | None]] = []
    ok = []
    for lib in libs:
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
        where = f"Ollama's {lib.runner} runner" if lib.runner else lib.path
        jit = " (first load JIT-compiles the PTX: slow once, cached after)" if "PTX" in how else ""
        return CHECK.finding(Status.PASS, f"{where} was built for {archs(lib)}: runs on {name} as {how}{jit}", ev)
    if any("unreadable" in r for r in rows) and not any(r.get("archs") for r in rows):
        return CHECK.finding(Status.WARN, "the ggml CUDA libraries could not be read: " + "; ".join(str(r["unreadable"]) for r in rows), ev)
    sm = cc.replace(".", "")
    if engine == Engine.OLLAMA:
        row = engine_support("ollama-cuda_v13")
        return CHECK.finding(Status.FAIL, f"none of Ollama's CUDA runners has code for {name} (cc {cc}): "
                             + "; ".join(f"{r['runner']}: {r.get('archs', '?')}" for r in rows)
                             + "; Ollama skips the card and runs on the CPU", {**ev, "source": row.source}, row.instead)
    return CHECK.finding(Status.FAIL, f"llama.cpp's CUDA library was built for {archs(libs[0])} only: it stops with \"ggml was "
                         f"not compiled with any CUDA arch <= {sm}0\" on {name} (cc {cc}). {CUDA13_NOTE if int(sm) <= 70 else ''}".rstrip(),
                         ev, f"Rebuild with the card's architecture: cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES={sm} "
                         "with CUDA 12.x (or use a CUDA 12 release build)",
                         [f"cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES={sm} && cmake --build build -j"])


CHECK = Check(id=CheckId.ENGINE_BUILD, title="The engine's CUDA build vs this card", run=run,
              depends_on=(CheckId.COMPUTE_CAPABILITY,), blocked_by=(Status.ERROR,))
