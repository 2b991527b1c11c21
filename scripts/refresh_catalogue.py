#!/usr/bin/env python3
"""Refresh the embedded model catalogue (doctor/facts/catalogue/models.json) from the Hugging Face Hub.

For each entry: its config.json as the Hub serves it now (one request each; the source becomes the Hub's URL at the
commit it came from, the date today), and for each GGUF repo it lists, the files of each type with their sizes (the
repo's tree; a split set's parts summed, the first part named). An entry the Hub does not give (gated, gone, no
network) is kept as it was and named on stderr; nothing is guessed. --add ORG/NAME adds a model (its GGUF repos
with --gguf ORG/NAME-GGUF). HF_TOKEN and HF_ENDPOINT are huggingface_hub's. Run it online, review `git diff`, commit.

    python3 scripts/refresh_catalogue.py [--only ORG/NAME ...] [--add ORG/NAME --gguf ORG/NAME-GGUF] [--out FILE]
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from doctor.facts.catalogue.load import CATALOGUE_FILE  # noqa: E402
from doctor.facts.catalogue.store import dumps  # noqa: E402
from doctor.facts.hub.quants import gguf_type_of  # noqa: E402

TYPES = ("Q3_K_M", "Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0")


def fetch_config(repo: str) -> tuple[dict, str]:
    """(config.json, its URL at the commit served)."""
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_download, hf_hub_url

    commit = get_hf_file_metadata(hf_hub_url(repo, "config.json")).commit_hash or "main"
    with tempfile.TemporaryDirectory() as tmp:
        data = json.loads(Path(hf_hub_download(repo, "config.json", local_dir=tmp)).read_text())
    return data, f"{constants.ENDPOINT}/{repo}/blob/{commit}/config.json"


def gguf_files(repo: str, today: str) -> list[dict]:
    """Each standard type the repo holds: its first file and the bytes of all its parts."""
    from huggingface_hub import HfApi, constants

    found: dict[str, tuple[str, int]] = {}
    for f in HfApi().list_repo_tree(repo, recursive=True):
        path = getattr(f, "path", "")
        kind = gguf_type_of(path) if path.endswith(".gguf") and "mmproj" not in path.lower() else None
        if kind in TYPES:
            first, size = found.get(kind, (path, 0))
            found[kind] = (min(first, path), size + (getattr(f, "size", 0) or 0))
    source = f"{constants.ENDPOINT}/{repo}/tree/main"
    return [{"fmt": "gguf", "repo": repo, "gguf_type": t, "filename": found[t][0], "bytes": found[t][1] or None,
             "source": source, "checked": today} for t in TYPES if t in found]


def refresh(entry: dict, today: str) -> dict:
    config, source = fetch_config(entry["repo"])
    out = {**entry, "config": config, "source": source, "checked": today}
    repos = list(dict.fromkeys(q["repo"] for q in entry.get("quants", ()) if q["fmt"] == "gguf"))
    quants = [q for q in entry.get("quants", ()) if q["fmt"] != "gguf"]
    for repo in repos:
        try:
            quants += gguf_files(repo, today)
        except Exception as exc:  # noqa: BLE001 - the Hub's errors: keep what the catalogue had for that repo
            print(f"refresh_catalogue: {repo}: kept as it was ({type(exc).__name__})", file=sys.stderr)
            quants += [q for q in entry.get("quants", ()) if q["repo"] == repo and q["source"].startswith("https://")]
    if quants:
        out["quants"] = quants
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", action="append", default=[], metavar="ORG/NAME", help="refresh these entries only")
    p.add_argument("--add", action="append", default=[], metavar="ORG/NAME", help="add a model")
    p.add_argument("--gguf", action="append", default=[], metavar="ORG/NAME", help="a GGUF repo of the added model")
    p.add_argument("--file", type=Path, default=CATALOGUE_FILE, help="the catalogue to read")
    p.add_argument("--out", type=Path, help="where to write (default: the file read)")
    args = p.parse_args(argv)
    data = json.loads(args.file.read_text(encoding="utf-8"))
    today = datetime.date.today().isoformat()
    entries = data["entries"]
    known = {e["repo"].lower() for e in entries}
    for repo in args.add:
        if repo.lower() not in known:
            quants = [{"fmt": "gguf", "repo": g, "gguf_type": "Q4_K_M", "source": "--gguf", "checked": today}
                      for g in args.gguf]
            entries.append({"repo": repo, "family": repo.split("/")[-1].split("-")[0], "source": "", "checked": today,
                            "config": {}, **({"quants": quants} if quants else {})})
    only = {r.lower() for r in args.only + args.add}
    out, kept = [], 0
    for e in entries:
        if only and e["repo"].lower() not in only:
            out.append(e)
            continue
        try:
            out.append(refresh(e, today))
        except Exception as exc:  # noqa: BLE001 - gated, gone, offline: the entry stays as it was
            print(f"refresh_catalogue: {e['repo']}: kept as it was ({type(exc).__name__}: {str(exc)[:120]})",
                  file=sys.stderr)
            if e.get("config"):
                out.append(e)
            kept += 1
    (args.out or args.file).write_text(dumps(today, data.get("sources", []), out), encoding="utf-8")
    print(f"refresh_catalogue: {len(out)} entries, {len(out) - kept} read from the Hub today, {kept} kept",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
