"""The pieces every engine's plan commands share: where a download lands, the `hf download` line for it, and the
llama.cpp conversion from the Hub's weights to a GGUF file. One spelling each, so that a row's steps name the same
files: the folder a download writes is the folder (or file) the next step reads.

Every line runs as printed in a POSIX shell from one working folder: paths are relative to it (models/...), values
are quoted with shlex.quote where they could need it, and nothing is left for the user to fill in.
"""

from __future__ import annotations

import shlex

from doctor.model.quant_plan import QuantCandidate

MODELS = "models"
LLAMA_CPP_CLONE = "git clone --depth 1 https://github.com/ggml-org/llama.cpp"
LLAMA_CPP_CONVERT_DEPS = "pip install -r llama.cpp/requirements/requirements-convert_hf_to_gguf.txt"
NO_HUB_ID = ("# no Hub id for this model: plan it by its Hub id (v100-doctor plan ORG/NAME) for the download and "
             "convert commands")


def q(text: str) -> str:
    return shlex.quote(text)


def repo_name(repo: str) -> str:
    return repo.rstrip("/").split("/")[-1]


def folder(c: QuantCandidate) -> str:
    """The folder (under models/) a Hub version downloads to: the repo's name, and its branch when not main."""
    base = repo_name(c.repo or "model")
    return f"{base}-{c.revision}" if c.revision and c.revision != "main" else base


def hf_download(repo: str, dest: str, revision: str | None = None, files: tuple[str, ...] = (),
                include: str | None = None) -> str:
    """`hf download` of a repo (or some of its files) into `dest`."""
    rev = f" --revision {q(revision)}" if revision and revision != "main" else ""
    names = "".join(f" {q(f)}" for f in files)
    inc = f" --include {q(include)}" if include else ""
    return f"hf download {q(repo)}{names}{rev}{inc} --local-dir {q(dest)}"


def gguf_fetch(c: QuantCandidate) -> tuple[str, str]:
    """(the download line, the path the run step loads) for a GGUF version on the Hub. A known file: that file (of a
    split set, every part, and llama.cpp loads them from the first); an unknown file name: every file of the type,
    and the run step finds the first (find | sort: part 00001 of a split set)."""
    dest = f"{MODELS}/{folder(c)}"
    if c.filename and "-00001-of-" in c.filename:
        stem = c.filename.split("-00001-of-")[0]
        return hf_download(c.repo or "", dest, c.revision, include=f"{stem}-*-of-*.gguf"), q(f"{dest}/{c.filename}")
    if c.filename:
        return hf_download(c.repo or "", dest, c.revision, files=(c.filename,)), q(f"{dest}/{c.filename}")
    pattern = f"*{c.gguf_type}*.gguf"
    return (hf_download(c.repo or "", dest, c.revision, include=pattern),
            f'"$(find {q(dest)} -name {q(pattern)} | sort | head -n 1)"')


def gguf_convert(base: str | None, gguf_type: str) -> tuple[tuple[tuple[str, str], ...], str]:
    """(steps, the GGUF path they write): the base model's weights from the Hub, llama.cpp's converter to an F16 GGUF,
    llama-quantize to the type. `base`: a Hub id; None: no steps can be printed (said in a shell comment)."""
    if base is None:
        return (("download", NO_HUB_ID),), q(f"{MODELS}/model-{gguf_type}.gguf")
    name = repo_name(base)
    src, f16, out = f"{MODELS}/{name}", f"{MODELS}/{name}-F16.gguf", f"{MODELS}/{name}-{gguf_type}.gguf"
    return ((("download", hf_download(base, src)),
             ("convert", f"{LLAMA_CPP_CLONE} && {LLAMA_CPP_CONVERT_DEPS} && python llama.cpp/convert_hf_to_gguf.py "
                         f"{q(src)} --outtype f16 --outfile {q(f16)}"),
             ("quantize", f"llama-quantize {q(f16)} {q(out)} {q(gguf_type)}"))), q(out)


def gguf_of(c: QuantCandidate, base: str | None) -> tuple[tuple[tuple[str, str], ...], str]:
    """(steps, path) that put this GGUF version on disk: nothing for a file already there, a download for one on the
    Hub, a conversion for one made from the base model."""
    if c.found == "local" and c.filename:
        return (("download", f"# already on disk: {c.filename}"),), q(c.filename)
    if c.repo is None:
        return gguf_convert(base, c.gguf_type or "Q4_K_M")
    line, path = gguf_fetch(c)
    return (("download", line),), path


def draft_gguf(draft: str) -> tuple[tuple[str, str], str]:
    """(step, path): a draft model's GGUF made from its Hub weights at Q8_0 (convert_hf_to_gguf.py writes q8_0)."""
    name = repo_name(draft)
    src, out = f"{MODELS}/{name}", f"{MODELS}/{name}-Q8_0.gguf"
    return (("draft", f"{hf_download(draft, src)} && python llama.cpp/convert_hf_to_gguf.py {q(src)} --outtype q8_0 "
                      f"--outfile {q(out)}"), q(out))
