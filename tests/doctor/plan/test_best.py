"""fit's ranking (doctor/plan/best.py): the score as stated, each row the row plan makes for that option, the
filters, and the speed bound that skips models changing nothing."""

from __future__ import annotations

import pytest

from doctor.facts.catalogue import candidates, catalogue, model_config
from doctor.facts.catalogue.licences import licence_of
from doctor.knowledge.arithmetic.model_bytes import dims
from doctor.knowledge.gpus import GPUS, spec_for_key
from doctor.plan.best import CatalogueReader, Filters, best_fit, uses_of
from doctor.plan.build import SAME_SPEED
from doctor.plan.rows import Setting, caches, row

READ = CatalogueReader(model_config, candidates, licence_of)
SIX = ("v100-pcie-16gb", "p100-pcie-16gb", "p40", "t4", "titan-v", "rtx-2080-ti")


def fit(cards=("v100-pcie-16gb",), limit=10, context=8192, min_bpw=3.5, min_tok_s=None, **filters):
    specs = tuple(spec_for_key(k) for k in cards)
    return best_fit(catalogue().entries, specs, "--target-gpu", context, min_bpw, min_tok_s, Filters(**filters),
                    limit, "test", READ)


def key(result):
    return [(c.row.cards, c.rank, c.model.repo, c.row.option.label, c.row.cache) for c in result.choices]


@pytest.mark.parametrize("card", SIX + ("h200",))
def test_the_speed_bound_changes_nothing(card):
    """The ranking with the bound (limit 10) is the first ten of the whole sweep's."""
    bounded, whole = fit((card,), limit=10), fit((card,), limit=None)
    assert key(bounded) == [k for k in key(whole) if k[1] <= 10]
    assert bounded.considered["options_planned"] < whole.considered["options_planned"]


def test_ranked_by_speed_above_the_floor_with_plans_rows():
    result = fit(min_params=7)
    speeds = [c.score for c in result.choices]
    assert speeds == sorted(speeds, reverse=True) and len(speeds) == 10
    for c in result.choices:
        r = c.row
        assert r.fits and (r.bpw or 16) >= 3.5 and c.model.params >= 7e9
        assert r.max_context >= 8192 and r.commands and r.knee  # planned whole: the longest context, streams
        # no other option of the model on this card is more than SAME_SPEED faster (plan's rule)
        entry = next(e for e in catalogue().entries if e.repo == c.model.repo)
        config = model_config(entry)
        setting = Setting(config, dims(config), (spec_for_key("v100-pcie-16gb"),))
        others = [row(setting, o, setting.cards, cache, 8192) for o in candidates(entry) if (o.bpw or 16) >= 3.5
                  for cache in caches("llama.cpp" if o.fmt == "gguf" else "exllamav2")]
        fastest = max((o.speed.mid for o in others if o.fits), default=0)
        assert r.speed.mid >= fastest * (1 - SAME_SPEED) or not candidates(entry)


def test_a_higher_floor_drops_the_small_versions():
    result = fit(min_bpw=6.0, limit=5)
    assert result.choices and all((c.row.bpw or 16) >= 6.0 for c in result.choices)


def test_min_tok_s_is_a_floor():
    result = fit(min_params=20, min_tok_s=100, limit=None)
    assert all(c.row.speed.mid >= 100 for c in result.choices)


def test_filters():
    code = fit(uses=("code",), limit=None)
    assert code.choices and all("code" in c.model.uses and "code" in c.model.repo.lower() for c in code.choices)
    moe = fit(("p40",), uses=("moe",), limit=None)
    assert moe.choices and all(c.model.active_params for c in moe.choices)
    dense = fit(uses=("dense",), limit=None)
    assert all(c.model.active_params is None for c in dense.choices)
    qwen = fit(families=("qwen",), max_params=8, limit=None)
    assert qwen.choices and all("qwen" in c.model.repo.lower() and c.model.params <= 8e9 for c in qwen.choices)
    mit = fit(licences=("MIT",), limit=None)
    assert mit.choices and {c.model.licence for c in mit.choices} == {"mit"}
    exl2 = fit(engine="exllamav2", limit=None)
    assert exl2.choices and {c.row.engine for c in exl2.choices} == {"exllamav2"}
    assert not fit(min_params=5000).choices


def test_two_cards_each_then_split():
    result = fit(("v100-pcie-16gb", "p40"), limit=3)
    assert [c.row.cards for c in result.choices] == [("v100-pcie-16gb",)] * 3 + [("p40",)] * 3 + [("v100-pcie-16gb", "p40")] * 3


def test_a_big_context_leaves_only_what_fits():
    result = fit(context=131072, limit=None)
    assert all(c.row.max_context >= 131072 for c in result.choices)


def test_uses():
    entries = {e.repo: e for e in catalogue().entries}
    repos = frozenset(r.lower() for r in entries)
    assert "chat" not in uses_of(entries["Qwen/Qwen2.5-7B"], repos, False)  # a base model with an -Instruct beside it
    assert "chat" in uses_of(entries["Qwen/Qwen2.5-7B-Instruct"], repos, False)
    assert "code" in uses_of(entries["Qwen/Qwen2.5-Coder-7B-Instruct"], repos, False)


def test_every_card_in_the_table_plans():
    for spec in GPUS:
        assert fit((spec.key,), limit=3).considered["models"] > 100
