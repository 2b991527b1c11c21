"""llama.cpp's fixed costs per layer and per token (doctor/knowledge/decode_fixed_cost.py): the module holds the
fits benchmarks/speed_model_fit.py wrote, they hold every measured figure they were fitted on, a small model reaches
a smaller share of its ceiling than a large one, and off the H200 the card's own efficiency holds at its anchor."""

from __future__ import annotations

import importlib.util
import json

import pytest
from conftest import ROOT

from doctor.knowledge import decode_fixed_cost as fc
from doctor.knowledge.engine_efficiency import efficiency

RESULTS = ROOT / "benchmarks/results/issue37-speed-model"
FITTED = json.loads((RESULTS / "fits-check-70b.json").read_text())
INPUTS = json.loads((RESULTS / "inputs.json").read_text())["points"]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / f"benchmarks/{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _fit_script():
    return _load("speed_model_fit")


def test_the_module_holds_the_recorded_fits():
    q40 = FITTED["type_shares"]["Q4_0"]
    assert len(fc.LLAMA_CPP_H200_FITS) == len(FITTED["fits"]) == 16 and fc.FIT_MISS == FITTED["widen"]
    for f, rec, q in zip(fc.LLAMA_CPP_H200_FITS, FITTED["fits"], q40):
        assert (f.share, f.layer_ms, f.token_ms) == (rec["share"], rec["layer_ms"], rec["token_ms"])
        assert f.q4_0_share == pytest.approx(sum(q) / 2, abs=1e-4)


@pytest.mark.parametrize("p", [p for p in INPUTS if "tok_s" in p], ids=lambda p: p["name"])
def test_every_measured_decode_is_inside_the_range(p):
    m = _fit_script()
    w, ctx = m.weights_ms(p["shape"], p["gguf_type"]), m.context_ms(p["shape"], p.get("past", 0), p.get("cache", "f16"))
    t = fc.h200_times(w, p["shape"]["layers"], p["gguf_type"])
    assert 1000 / (t.slow + ctx) <= min(p["tok_s"]) and max(p["tok_s"]) <= 1000 / (t.fast + ctx)


SHAPES = {  # (layers, hidden, ffn, heads, kv_heads)
    "1B-like": (16, 2048, 8192, 32, 8), "8B-like": (32, 4096, 14336, 32, 8), "27B-like": (64, 5120, 21760, 40, 8),
    "70B-like": (80, 8192, 28672, 64, 8),
}


def _times(name: str, gguf_type: str = "Q4_K_M"):
    m = _fit_script()
    layers, h, ff, heads, kv = SHAPES[name]
    shape = {"layers": layers, "hidden": h, "intermediate": ff, "heads": heads, "kv_heads": kv}
    w = m.weights_ms(shape, gguf_type)
    return w, fc.h200_times(w, layers, gguf_type)


def test_a_small_model_reaches_a_smaller_share_of_its_ceiling_than_a_large_one():
    shares = [w / t.mid for w, t in map(_times, SHAPES)]
    assert shares == sorted(shares) and shares[0] < 0.2 and shares[-1] > 0.35


@pytest.mark.parametrize("name", ["8B-like", "27B-like", "70B-like"])
def test_ranges_are_within_15_percent_of_the_middle_from_8b_to_70b(name):
    _, t = _times(name)
    assert t.slow / t.mid - 1 <= 0.15 and 1 - t.fast / t.mid <= 0.15


def test_below_the_fitted_sizes_the_range_widens_as_the_per_token_cost_is_not_pinned():
    # 1B-like is smaller than any fitted shape: the fits' per-token costs (0.14-0.32 ms) spread its time 15-16%;
    # a measured small shape (benchmarks/device_issue37_speed.sh) is what narrows it, not a narrower claim
    _, t = _times("1B-like")
    assert 0.15 < t.slow / t.mid - 1 < 0.20


def test_q4_0_runs_nearer_the_bandwidth_than_q4_k_m_with_the_same_fixed_costs():
    assert all(f.q4_0_share > f.share for f in fc.LLAMA_CPP_H200_FITS)


def test_off_hopper_the_cards_own_efficiency_holds_at_its_anchor_and_a_smaller_model_gets_less():
    eff, _ = efficiency("llama.cpp", "volta")
    anchor_bytes, layers = fc.ANCHORS["volta"]
    w = anchor_bytes / 900e6
    t = fc.elsewhere_times(w, layers, 900, "volta", eff.low, eff.mid, eff.high)
    assert t is not None and w / t.mid == pytest.approx(eff.mid, rel=0.01)
    small = fc.elsewhere_times(w / 4, layers // 2, 900, "volta", eff.low, eff.mid, eff.high)
    assert small is not None and (w / 4) / small.mid < eff.mid


def test_no_anchor_or_fixed_costs_longer_than_the_anchor_give_no_carried_figure():
    assert fc.elsewhere_times(10.0, 32, 900, "ada", 0.5, 0.6, 0.7) is None
    assert fc.anchored_share(0.9, 0.5, 64) is None  # 64 layers of fixed costs alone take longer than 0.5 / 0.9 ms


def test_the_device_sweeps_runs_refit_to_the_costs_they_were_made_with_and_check_the_held_out_shapes(tmp_path):
    """benchmarks/speed_shapes.py's runs (made here from known costs, 0.5% apart) through its `inputs` and
    speed_model_fit.py: the fit finds the costs again, and the held-out shapes land inside their ranges; with the
    costs changed for the held-out shapes only, they do not."""
    shapes, fit = _load("speed_shapes"), _fit_script()
    true = {"share": 0.45, "layer_ms": 0.05, "token_ms": 0.2}

    def runs(path, held_out_slower=1.0):
        with path.open("w") as fh:
            for name, (role, *dims) in shapes.SHAPES.items():
                for gguf_type, cache, depth in shapes.OPTIONS[:3]:
                    layers, hidden, ffn, heads, kv = dims
                    s = {"layers": layers, "hidden": hidden, "intermediate": ffn, "heads": heads, "kv_heads": kv,
                         "head_dim": hidden // heads}
                    t = (fit.weights_ms(s, gguf_type) / true["share"] + layers * true["layer_ms"] + true["token_ms"]) \
                        * (held_out_slower if role == "check" else 1.0) + fit.context_ms(s, depth + 64, cache)
                    fh.write(json.dumps({"shape": name, "role": role, "dims": dims, "gguf_type": gguf_type, "cache": cache,
                                         "depth": depth, "samples_ts": [1000 / t * (1 + j) for j in (-0.0025, 0, 0.0025)],
                                         "nvml_peak_delta_bytes": 0}) + "\n")

    def table(held_out_slower):
        r = tmp_path / f"runs-{held_out_slower}.jsonl"
        runs(r, held_out_slower)
        shapes.inputs(r, tmp_path / "inputs.json")
        import sys
        argv = sys.argv
        sys.argv = ["fit", "--inputs", str(tmp_path / "inputs.json"), "--out", str(tmp_path)]
        try:
            fit.main()
        finally:
            sys.argv = argv
        return (json.loads((tmp_path / "fits.json").read_text()),
                json.loads((tmp_path / "fits-out-of-sample.json").read_text()))

    fitted, rows = table(1.0)
    env = fitted["envelope"]
    assert env["share"][0] <= true["share"] <= env["share"][1] and env["layer_ms"][0] <= 0.05 <= env["layer_ms"][1]
    held = [r for r in rows if r["role"] == "check"]
    assert len(held) == 12 and all(r["inside"] for r in rows)
    _, rows = table(1.10)
    assert not any(r["inside"] for r in rows if r["role"] == "check")
