"""The docs' reference pages are generated from the code (docs/generate_reference.py) and must be current; the
README stays a small first screen that names the five jobs and links into the docs."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def generator():
    spec = importlib.util.spec_from_file_location("generate_reference", ROOT / "docs" / "generate_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return generator().pages()


def test_every_generated_page_is_current(pages):
    stale = [name for name, text in pages.items()
             if not (ROOT / "docs" / "reference" / name).is_file()
             or (ROOT / "docs" / "reference" / name).read_text(encoding="utf-8") != text]
    assert stale == [], f"run `python3 docs/generate_reference.py`: {stale} out of date"


def test_the_pages_name_every_check_signature_key_code_and_schema(pages):
    from checks.registry import all_checks
    from doctor.knowledge.signatures import SIGNATURES
    from doctor.model.exitcodes import ExitCode
    from doctor.tui.keys import MAIN_KEYS, STORY_KEYS

    assert all(f"| `{c.id.value}` |" in pages["checks.md"] for c in all_checks())
    assert all(f"| `{s.id}` |" in pages["signatures.md"] and f"<{s.source}>" in pages["signatures.md"] for s in SIGNATURES)
    assert all(what in pages["keys.md"] for _, what in MAIN_KEYS + STORY_KEYS)
    assert all(f"| {c.value} | " in pages["exit-codes.md"] for c in ExitCode)
    assert all(f"`doctor/schema/{p.name}`" in pages["schemas.md"] for p in (ROOT / "doctor" / "schema").glob("*.json"))


def test_a_check_lists_the_knowledge_it_reads(pages):
    row = next(line for line in pages["checks.md"].splitlines() if line.startswith("| `memory-budget` |"))
    assert "kv_cache" in row and "exllamav2_memory" in row
    assert "https://" in pages["checks.md"].split("## Knowledge sources", 1)[1]


def test_a_changed_table_makes_the_page_stale(pages, monkeypatch):
    """The currency test can fail: a key added to the table changes the page the generator writes."""
    module = generator()
    monkeypatch.setattr(module, "MAIN_KEYS", module.MAIN_KEYS + (("x", "a key nobody bound"),))
    assert module.keys_page() != pages["keys.md"]


def test_the_readme_is_one_screen_of_the_docs():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) < 10_000
    first_screen = "\n".join(text.splitlines()[:40])
    for command in ("v100-doctor`", "--target-gpu", "v100-doctor explain", "v100-doctor bundle", "v100-doctor watch"):
        assert command in first_screen, command
    assert "**Engines:**" in first_screen  # the engines line on the first screen
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / link).is_file(), link
    assert (ROOT / "docs" / "images" / "tui.svg").is_file()


def test_every_docs_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert {p for p in pages if f": {p}" not in nav} == set()
