"""Batched decode in the report's faces (doctor/render/batched_text.py): the text and Markdown sections for the story
(flat, with the reason) and for llama.cpp (rising, the knee, --parallel), nothing for a host without a model, one
line for an Unknown; the JSON validates, loads back typed, and its replay prints the same section."""

from __future__ import annotations

import json
from dataclasses import replace

from conftest import MACHINES, ROOT, run_cli

from doctor.facts.replay import load_document
from doctor.knowledge.exl2_batching import OLD_CARD_FIX
from doctor.model.batched import NO_MODEL, BatchedDecode
from doctor.model.report import parse_document, report_to_dict, report_to_json
from doctor.model.unknown import Unknown
from doctor.render.batched_text import markdown_lines, one_line, text_lines
from doctor.render.markdown import render_markdown
from doctor.render.text import render_text
from doctor.run.pipeline import diagnose

STORY_MODEL = str(ROOT / "fixtures/models/qwen2-27b-exl2-3.75bpw")
STORY_ARGS = ("--replay", str(MACHINES / "v100-pcie-16gb-healthy.json"), "--model", STORY_MODEL, "--max-seq-len", "8192",
              "--cache-mode", "q8")


def story():
    loaded = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json"))
    return diagnose(replace(loaded.plan, model_path=STORY_MODEL, max_seq_len=8192, cache_mode="q8"), loaded.facts)


def replayed(name: str):
    loaded = load_document(str(MACHINES / name))
    return diagnose(loaded.plan, loaded.facts)


def section(text: str) -> list[str]:
    """The text report's batched-decode section: its heading to the blank line after it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Batched decode, estimated"))
    end = next(i for i in range(start, len(lines)) if not lines[i].strip())
    return lines[start:end]


def test_the_story_section_says_flat_and_why():
    text = render_text(story(), width=200)
    s = section(text)
    assert s[0] == ("Batched decode, estimated (EXL2 3.75 bpw on v100-pcie-16gb, exllamav2, q8 cache, 8192 tokens per "
                    "stream; speeds with half of each stream's context in the cache):")
    b = story().batched_decode
    one = b.single
    assert one.low < one.mid and s[1] == f"  1 stream x 8192 tokens: {one.mid:g} tok/s ({one.low:g}-{one.high:g})"
    assert s[2].startswith(f"  2 streams x 8192 tokens: {one.mid:g} tok/s in total")
    assert "  knee: one stream at a time: more streams wait their turn (flash-attn is not installed)" in s
    assert any(line.strip() == f"serve: {OLD_CARD_FIX}" for line in s)  # sm_70: flash-attn 2 cannot run there
    assert text.index("Batched decode") < text.index("Summary:")


def test_the_llama_cpp_section_rises_and_names_the_engines_batching_terms():
    report = replayed("engines/v100-llamacpp-healthy.json")
    s = section(render_text(report, verbose=True, width=200))
    b = report.batched_decode
    assert s[0].startswith("Batched decode, estimated (GGUF Q4_K_M on v100-pcie-16gb, llama.cpp, f16 cache")
    assert len([line for line in s if " streams x " in line]) == len(b.entries) - 1
    assert any(line.startswith("  knee: ") for line in s)
    assert any(line.startswith(f"  serve: llama-server --parallel {b.knee} -c ") for line in s)
    assert any(line.startswith("  how: estimate: llama-server --parallel N") for line in s)
    assert any(line.startswith("  assumed: the cache's room") for line in s)
    assert not any(line.startswith("  how:") for line in section(render_text(report, width=200)))  # -v only


def test_markdown_has_the_ladder_as_a_table_and_the_knee():
    report = replayed("engines/v100-llamacpp-healthy.json")
    md = render_markdown(report)
    b = report.batched_decode
    assert "| streams | context each | total tok/s | each tok/s |" in md
    first = b.entries[0]
    assert (f"| 1 | {first.context_per_stream} | {first.total_tok_s.mid:g} ({first.total_tok_s.low:g}-"
            f"{first.total_tok_s.high:g}) |") in md
    assert "- knee: " in md and "- serve: llama-server --parallel" in md
    assert markdown_lines(report)[0].startswith("**Batched decode, estimated (GGUF Q4_K_M")


def test_a_host_without_a_model_has_no_section_but_the_json_says_why():
    report = replayed("v100-pcie-16gb-healthy.json")
    assert report.batched_decode == Unknown(NO_MODEL)
    assert "Batched decode" not in render_text(report) and "Batched decode" not in render_markdown(report)
    assert one_line(report) == "" and text_lines(report) == []
    assert report_to_dict(report)["batched_decode"] == {"unknown": NO_MODEL}


def test_an_unknown_with_a_model_is_one_line_with_its_reason():
    report = replayed("engines/t4-llamacpp-27b-does-not-fit.json")
    lines = text_lines(report, width=300)
    assert len(lines) == 1 and lines[0].startswith("Batched decode, estimated: unknown (GGUF Q4_K_M with the f16 cache")
    assert markdown_lines(report)[0].startswith("**Batched decode, estimated:** unknown (")


def test_the_json_validates_and_loads_back_typed(validate):
    for report in (story(), replayed("engines/v100-llamacpp-healthy.json"), replayed("v100-pcie-16gb-healthy.json")):
        doc = validate(json.loads(report_to_json(report)))
        back = parse_document(doc, "saved.json").report
        assert back is not None and back.batched_decode == report.batched_decode
    assert isinstance(story().batched_decode, BatchedDecode)


def test_a_report_from_before_the_field_still_validates_and_loads(validate):
    doc = json.loads(report_to_json(story()))
    doc.pop("batched_decode")
    back = parse_document(validate(doc), "old.json").report
    assert back is not None and back.batched_decode is None


def test_the_schema_refuses_a_made_up_shape(report_schema):
    import jsonschema
    import pytest

    doc = json.loads(report_to_json(story()))
    doc["batched_decode"]["entries"][0]["total_tok_s"] = 64  # a bare number: no range
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, report_schema)


def test_the_saved_json_replays_to_the_same_section(tmp_path):
    live = run_cli(*STORY_ARGS, "--no-tui")
    saved = run_cli(*STORY_ARGS, "--json")
    path = tmp_path / "story.json"
    path.write_text(saved.stdout)
    again = run_cli("--replay", str(path), "--no-tui")
    assert section(live.stdout) == section(again.stdout)
    assert json.loads(saved.stdout)["batched_decode"]["knee"] == 1


def test_the_demos_story_without_config_json_shares_the_measured_speed_out(validate):
    """`v100-doctor demo`'s last stage: no --model facts, only ExLlamaV2's probe (64 tok/s, no spread recorded). On a
    V100 without flash-attn the streams take turns: the total is the measured speed, each of N gets 1/N of it."""
    report = run_cli("--replay", "doctor/examples/seed-4-exl2-3.75bpw.json", "--no-tui").stdout
    s = section(report)
    assert s[0].startswith("Batched decode, estimated (EXL2 3.75 bpw on v100-pcie-16gb, exllamav2, q8 cache, 8192 tokens")
    assert "one stream as the probe measured it" in " ".join(s)
    assert "  1 stream x 8192 tokens: 64 tok/s" in s and "  8 streams x 8192 tokens: 64 tok/s in total, 8 each" in s
    assert "  knee: one stream at a time: more streams wait their turn (flash-attn is not installed)" in s
    doc = validate(json.loads(run_cli("--replay", "doctor/examples/seed-4-exl2-3.75bpw.json", "--json").stdout))
    assert doc["batched_decode"]["knee"] == 1 and not doc["batched_decode"]["batches"]


def test_the_demos_transformers_stage_has_no_section():
    """The story's first stage measured Transformers + bitsandbytes: its serving is not estimated, and nothing is said."""
    assert "Batched decode" not in run_cli("--replay", "doctor/examples/seed-1-transformers-bnb.json", "--no-tui").stdout


def test_a_split_names_its_cards_once_each_kind():
    loaded = load_document(str(MACHINES / "v100-sxm2-4x-nvlink.json"))
    report = diagnose(replace(loaded.plan, model_path=STORY_MODEL, max_seq_len=8192, cache_mode="q8"), loaded.facts)
    assert report.batched_decode.cards == ("v100-sxm2-16gb",) * 4
    assert section(render_text(report, width=300))[0].startswith(
        "Batched decode, estimated (EXL2 3.75 bpw on 4 x v100-sxm2-16gb (split), exllamav2, q8 cache")
    loaded = load_document(str(MACHINES / "mixed-2080ti-v100.json"))
    report = diagnose(replace(loaded.plan, model_path=STORY_MODEL, max_seq_len=8192, cache_mode="q8"), loaded.facts)
    assert "on rtx-2080-ti + v100-pcie-16gb (split), " in section(render_text(report, width=300))[0]
