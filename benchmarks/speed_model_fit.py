"""Fit llama.cpp's decode time on the H200 as fixed costs plus the weights at a share of the bandwidth (issue 37).

Per decoded token, all layers on the GPU, flash attention on:

    t = W / (B x s) + L x c + c0 + the context term

  W   the bytes of the weights a decode step reads (every GPU tensor: the layers and the output head; the token
      embedding stays on the host), as the plan counts them (doctor/plan/gguf_memory.py)
  B   the datasheet bandwidth (4800 GB/s); s the share of it the big matrix-vector products reach
  L   layers; c the fixed cost of one layer (its ~15 small kernels: norms, rope, cache writes, flash attention, adds,
      and the ramp of each product that a small matrix cannot hide); c0 the fixed cost of one token (graph launch,
      the host's work, the final norm)
  the context term: the f16 cache at the bandwidth, a quantized one at its measured cost per past token
      (doctor/knowledge/decode_context.py, fitted in issue 28; subtracted before the fit)

Why this form: one share of the ceiling per engine (0.296, fitted on the 27B shape) put an 8B-like model 16-24% too
fast and a 70B-like slice 22-28% too slow (issue 37). A fixed cost per layer is a larger part of a small layer's
time and a smaller part of a big one's, which is the direction and roughly the size of both misses.

Three unknowns (1/s, c, c0) are solved from the fit groups (exactly for three, by least squares for more), once for
every corner of the groups' measured intervals; the plan's range for a shape is the envelope of the times the fits
give it, widened by their largest miss. A point of role "check" is predicted, never fitted (--also-fit GROUP moves
one into the fit). Writes fits[-GROUP].json (the fits, their envelope, other types' shares) and
fits[-GROUP]-out-of-sample.md / .json (every point, measured against the planned range, with its role).

  python3 benchmarks/speed_model_fit.py --inputs benchmarks/results/issue37-speed-model/inputs.json \
      --out benchmarks/results/issue37-speed-model
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from doctor.knowledge.arithmetic import decode_time as dt  # noqa: E402
from doctor.knowledge.arithmetic.decode_bytes import read_ms  # noqa: E402
from doctor.knowledge.arithmetic.model_bytes import ModelDims  # noqa: E402
from doctor.plan import gguf_memory as gm  # noqa: E402

BANDWIDTH_GBS = 4800.0


def dims(shape: dict) -> ModelDims:
    return ModelDims(layers=shape["layers"], hidden=shape["hidden"], heads=shape["heads"], kv_heads=shape["kv_heads"],
                     head_dim=shape.get("head_dim", 128), intermediate=shape["intermediate"],
                     vocab=shape.get("vocab", 8192), tied=False)


def weights_ms(shape: dict, gguf_type: str) -> float:
    d = dims(shape)
    return read_ms(gm.gguf_shape(d, None, None, gguf_type).gpu_weight_bytes, BANDWIDTH_GBS)


def context_ms(shape: dict, past: int, cache: str) -> float:
    d = dims(shape)
    return dt.llama_context_ms(d, past, cache, d.layers, BANDWIDTH_GBS, "h200").mid


def time_interval(p: dict) -> tuple[float, float]:
    """(fast, slow) ms per token less the context term: from tok/s repeats, or from a share-of-ceiling interval
    (issue 37's summary of runs whose raw files are not in the repository)."""
    ctx = context_ms(p["shape"], p.get("past", 0), p.get("cache", "f16"))
    if "tok_s" in p:
        return 1000 / max(p["tok_s"]) - ctx, 1000 / min(p["tok_s"]) - ctx
    w = weights_ms(p["shape"], p["gguf_type"])
    lo, hi = p["weights_share"]
    return w / hi, w / lo


def solve3(rows: list[tuple[float, float, float, float]]) -> tuple[float, float, float] | None:
    """(x, y, z) with a x + b y + c z = t for three rows (a, b, c, t); None when singular."""
    m = [list(r) for r in rows]
    for i in range(3):
        piv = max(range(i, 3), key=lambda k: abs(m[k][i]))
        if abs(m[piv][i]) < 1e-12:
            return None
        m[i], m[piv] = m[piv], m[i]
        for k in range(3):
            if k != i:
                f = m[k][i] / m[i][i]
                m[k] = [a - f * b for a, b in zip(m[k], m[i])]
    return m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]


def least_squares(rows: list[tuple[float, float, float, float]]) -> tuple[float, float, float] | None:
    """(x, y, z) minimising the squared relative misses of a x + b y + c z = t (exact for three rows)."""
    if len(rows) == 3:
        return solve3(rows)
    w = [[v / r[3] for v in r] for r in rows]  # relative: each point's time counts as much as another's
    ata = [[sum(r[i] * r[j] for r in w) for j in range(3)] + [sum(r[i] * r[3] for r in w)] for i in range(3)]
    return solve3([(a[0], a[1], a[2], a[3]) for a in ata])


def fits(points: list[dict]) -> list[dict]:
    """One fit per corner of the fit groups' intervals (a group's points share a shape and are pooled to one
    interval: the fastest and the slowest time measured): exact with three groups, least squares with more."""
    groups: dict[str, list[dict]] = {}
    for p in points:
        groups.setdefault(p["group"], []).append(p)
    if len(groups) < 3:
        raise SystemExit(f"three fit groups needed at least (a shape each), got {sorted(groups)}")
    rows = []
    for name, ps in sorted(groups.items()):
        ivs = [time_interval(p) for p in ps]
        lo, hi = min(a for a, _ in ivs), max(b for _, b in ivs)
        p = ps[0]
        rows.append((name, weights_ms(p["shape"], p["gguf_type"]), p["shape"]["layers"], (lo, hi)))
    out = []
    for corner in itertools.product(*[(r[3][0], r[3][1]) for r in rows]):
        sol = least_squares([(w, float(n), 1.0, t) for (_, w, n, _), t in zip(rows, corner)])
        if sol is None or sol[0] <= 0:
            continue
        inv_s, c, c0 = sol
        out.append({"share": round(1 / inv_s, 4), "layer_ms": round(c, 5), "token_ms": round(c0, 4),
                    "from": {r[0]: round(t, 4) for r, t in zip(rows, corner)}})
    return out


def type_share(f: dict, p: dict) -> tuple[float, float]:
    """Another GGUF type's share with this fit's fixed costs (the same kernels around its products): from its
    slowest and fastest time."""
    w, n = weights_ms(p["shape"], p["gguf_type"]), p["shape"]["layers"]
    fast, slow = time_interval(p)
    return w / (slow - n * f["layer_ms"] - f["token_ms"]), w / (fast - n * f["layer_ms"] - f["token_ms"])


def predict(f: list[dict], shape: dict, gguf_type: str, past: int, cache: str, widen: float = 0.0
            ) -> tuple[float, float, float]:
    """(slow, mid, fast) tok/s over the fits: their envelope widened by `widen` (a fraction of the time), and the
    mean fit's time as the middle."""
    w, ctx, n = weights_ms(shape, gguf_type), context_ms(shape, past, cache), shape["layers"]
    times = [w / x["share"] + n * x["layer_ms"] + x["token_ms"] + ctx for x in f]
    mid = sum(times) / len(times)
    return 1000 / (max(times) * (1 + widen)), 1000 / mid, 1000 / (min(times) * (1 - widen))


def residual_widening(f: list[dict], points: list[dict]) -> float:
    """The fraction by which the fits' envelope must widen to hold every fit point's measured interval (0 for an
    exact fit of three groups; the least-squares misses with more)."""
    need = 0.0
    for p in points:
        w, n = weights_ms(p["shape"], p["gguf_type"]), p["shape"]["layers"]
        ctx = context_ms(p["shape"], p.get("past", 0), p.get("cache", "f16"))
        times = [w / x["share"] + n * x["layer_ms"] + x["token_ms"] for x in f]
        fast, slow = time_interval(p)
        need = max(need, (slow + ctx) / (max(times) + ctx) - 1, 1 - (fast + ctx) / (min(times) + ctx))
    return round(need + 0.0005, 4)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--type", default="Q4_K_M", help="the GGUF type whose fit points are used")
    ap.add_argument("--also-fit", action="append", default=[], metavar="GROUP", help="fit a check group too")
    a = ap.parse_args()
    data = json.loads(Path(a.inputs).read_text())
    for p in data["points"]:
        if p["group"] in a.also_fit:
            p["role"] = "fit"
    pts = [p for p in data["points"] if p["role"] == "fit" and p["gguf_type"] == a.type]
    f = fits(pts)
    widen = residual_widening(f, pts)
    env = {k: (min(x[k] for x in f), max(x[k] for x in f)) for k in ("share", "layer_ms", "token_ms")}
    types: dict[str, list[list[float]]] = {}
    for p in data["points"]:
        if p["role"] == "type":
            types.setdefault(p["gguf_type"], [[round(x, 4) for x in type_share(x, p)] for x in f])
    tag = "-".join(["fits", *a.also_fit])
    Path(a.out, f"{tag}.json").write_text(json.dumps({"type": a.type, "also_fit": a.also_fit, "fits": f, "envelope": env, "widen": widen,
                                                      "type_shares": types}, indent=1) + "\n")
    table = []
    for p in data["points"]:
        if p["gguf_type"] != a.type or p["role"] == "type":
            continue
        slow, mid, fast = predict(f, p["shape"], p["gguf_type"], p.get("past", 0), p.get("cache", "f16"), widen)
        if "tok_s" in p:
            got = sorted(p["tok_s"])[len(p["tok_s"]) // 2]
            what = f"{got:.1f} tok/s"
            inside = slow <= min(p["tok_s"]) and max(p["tok_s"]) <= fast
        else:
            w = weights_ms(p["shape"], p["gguf_type"])
            ctx = context_ms(p["shape"], p.get("past", 0), p.get("cache", "f16"))
            got_lo, got_hi = (1000 / (w / s + ctx) for s in p["weights_share"])
            what = f"{got_lo:.1f}-{got_hi:.1f} tok/s (from a share of {p['weights_share'][0]}-{p['weights_share'][1]})"
            inside = slow <= got_lo and got_hi <= fast
        table.append({"name": p["name"], "role": p["role"], "measured": what, "planned_mid": round(mid, 1),
                      "planned_range": [round(slow, 1), round(fast, 1)],
                      "range_pct": [round(100 * (slow / mid - 1), 1), round(100 * (fast / mid - 1), 1)],
                      "inside": inside, "source": p["source"]})
    Path(a.out, f"{tag}-out-of-sample.json").write_text(json.dumps(table, indent=1) + "\n")
    lines = ["| point | role | measured | planned (range) | range vs mid | inside |", "|---|---|---|---|---|---|"]
    for r in table:
        lo, hi = r["planned_range"]
        lines.append(f"| {r['name']} | {r['role']} | {r['measured']} | {r['planned_mid']} ({lo}-{hi}) | "
                     f"{r['range_pct'][0]:+.1f}/{r['range_pct'][1]:+.1f}% | {'yes' if r['inside'] else 'NO'} |")
    Path(a.out, f"{tag}-out-of-sample.md").write_text("\n".join(lines) + "\n")
    print(json.dumps({**env, "widen": widen}))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
