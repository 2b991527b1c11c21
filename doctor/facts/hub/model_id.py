"""--model org/name[@revision]: a Hugging Face model id, found the way huggingface_hub finds it.

The local cache first, through huggingface_hub itself (snapshot_download with local_files_only=True honours HF_HOME,
HF_HUB_CACHE and the revision's ref), so a cached model is read exactly like a model directory. When it is not
cached and the network is allowed (HF_HUB_OFFLINE unset), the plan comes from config.json and the safetensors
headers alone, through huggingface_hub's safetensors metadata API (a few KB of headers by HTTP range requests:
https://huggingface.co/docs/huggingface_hub/package_reference/hf_api#huggingface_hub.HfApi.get_safetensors_metadata);
no weight is downloaded, config.json goes to a temporary folder (the user's cache is not written), and it says so.
"""

from __future__ import annotations

import os
import re
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from doctor.facts.hub.quiet import hub_quiet
from doctor.facts.modeldir.config import ConfigError, load_config_json, parse_config
from doctor.facts.modeldir.safetensors_header import SafetensorsHeader, TensorHeader
from doctor.facts.modeldir.weights import assemble, weights_facts
from doctor.model.errors import UsageError
from doctor.model.model_dir import ModelFacts

if TYPE_CHECKING:
    from huggingface_hub.utils import SafetensorsFileMetadata

_HUB_ID = re.compile(r"^(?P<repo>[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*)(?:@(?P<rev>[^\s@]+))?$")
HUB_TIMEOUT_S = 1.5  # one request, one short wait: an unreachable Hub costs this, not huggingface_hub's 5 retries (24 s)
HEADER_SOURCE = "safetensors headers from the Hugging Face Hub (get_safetensors_metadata; no weights downloaded)"
_fetched: dict[str, ModelFacts] = {}  # one fetch per id and run: the plan and the gatherer ask for the same one


@dataclass(frozen=True)
class HubId:
    repo: str
    revision: str | None

    @property
    def label(self) -> str:
        return self.repo + (f"@{self.revision}" if self.revision else "")


def hub_id(text: str) -> HubId | None:
    """`org/name` or `org/name@revision` that is not a path on this machine."""
    if text.startswith(("/", ".", "~")) or os.path.exists(os.path.expanduser(text)):
        return None
    m = _HUB_ID.match(text)
    return HubId(m.group("repo"), m.group("rev")) if m else None


def offline() -> bool:
    import huggingface_hub  # lazy: huggingface_hub loads only for --model org/name

    check = getattr(huggingface_hub, "is_offline_mode", None)
    return bool(check()) if check else bool(huggingface_hub.constants.HF_HUB_OFFLINE)


def cached_snapshot(ident: HubId) -> str | None:
    """The cached snapshot folder when it holds config.json and weights (a partial download is not a model)."""
    from huggingface_hub import snapshot_download  # lazy: huggingface_hub loads only for --model org/name

    try:
        folder = snapshot_download(ident.repo, revision=ident.revision, local_files_only=True)
    except Exception:  # noqa: BLE001 - LocalEntryNotFoundError and kin (the class names moved between releases)
        return None
    names = os.listdir(folder) if os.path.isdir(folder) else []
    weights = any(n.endswith((".safetensors", ".gguf")) for n in names)
    return folder if "config.json" in names and weights else None


def cache_folder() -> str:
    from huggingface_hub import constants  # lazy: huggingface_hub loads only for --model org/name

    return str(constants.HF_HUB_CACHE)


def header_only(ident: HubId) -> ModelFacts:
    """ModelFacts from the Hub's config.json and safetensors headers; UsageError with one line when it cannot."""
    if ident.label in _fetched:
        return _fetched[ident.label]
    from huggingface_hub import get_safetensors_metadata, hf_hub_download  # lazy: huggingface_hub loads only for --model org/name

    try:
        with hub_quiet():  # huggingface_hub's retry lines stay off the terminal; one line of ours instead
            meta = get_safetensors_metadata(ident.repo, revision=ident.revision)
        with tempfile.TemporaryDirectory(prefix="v100-doctor-hub-") as tmp, hub_quiet():
            config_file = hf_hub_download(ident.repo, "config.json", revision=ident.revision, local_dir=tmp)
            config_raw = load_config_json(Path(config_file))
            qc = _optional_json(ident, "quantize_config.json", tmp)
    except ConfigError as exc:
        raise UsageError(f"--model {ident.label}: the Hub's config.json: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - huggingface_hub's HTTP and repo errors, one line each
        raise UsageError(f"--model {ident.label}: {_why(exc, ident)}") from None
    headers = {name: _header(name, fm) for name, fm in meta.files_metadata.items()}
    names = sorted(["config.json", *headers] + (["quantize_config.json"] if qc is not None else []))
    weights, _, act = weights_facts(Path("."), names, headers=headers, source=HEADER_SOURCE)
    from huggingface_hub import constants  # lazy: huggingface_hub loads only for --model org/name

    url = f"{constants.ENDPOINT}/{ident.repo}" + (f"/tree/{ident.revision}" if ident.revision else "")
    facts = assemble(ident.label, url, names, config_raw, parse_config(config_raw), "", qc, weights, act, 0,
                     kind="hub-headers")
    _fetched[ident.label] = facts
    return facts


def _optional_json(ident: HubId, name: str, tmp: str) -> dict | None:
    from huggingface_hub import hf_hub_download  # lazy: huggingface_hub loads only for --model org/name

    try:
        return load_config_json(Path(hf_hub_download(ident.repo, name, revision=ident.revision, local_dir=tmp)))
    except Exception:  # noqa: BLE001 - most repos have none
        return None


def _header(name: str, fm: SafetensorsFileMetadata) -> SafetensorsHeader:
    tensors = tuple(TensorHeader(t, info.dtype, tuple(info.shape), *info.data_offsets) for t, info in fm.tensors.items())
    return SafetensorsHeader(path=name, file_bytes=max((t.end for t in tensors), default=0), header_bytes=0,
                             tensors=tensors, metadata=dict(fm.metadata or {}))


def download_command(ident: HubId) -> str:
    """The command that puts the model in the Hugging Face cache, where a later run finds it offline: `hf download`
    from huggingface_hub 0.34 on, `huggingface-cli download` before."""
    import huggingface_hub  # lazy: huggingface_hub loads only for --model org/name

    try:
        tool = "hf" if Version(huggingface_hub.__version__) >= Version("0.34") else "huggingface-cli"
    except InvalidVersion:
        tool = "hf"
    return f"{tool} download {ident.repo}" + (f" --revision {shlex.quote(ident.revision)}" if ident.revision else "")


def config_command(ident: HubId) -> str:
    """The command that puts config.json alone (a few KB) in the Hugging Face cache, where the plan finds it offline."""
    return download_command(ident).replace(f"download {ident.repo}", f"download {ident.repo} config.json", 1)


def fetch_config_once(ident: HubId) -> dict:
    """config.json from the Hub in one request with a short timeout (HUB_TIMEOUT_S), never retried: the plan asks the
    Hub only for what the catalogue and the cache lack, and a user without a network hears so at once. The token
    and endpoint are huggingface_hub's (HF_TOKEN, HF_ENDPOINT); its errors are its own (hf_raise_for_status), so
    _why words them. Raises UsageError (one line) when the Hub cannot give it."""
    from huggingface_hub import get_session, hf_hub_url  # lazy: huggingface_hub loads only for a Hub id
    from huggingface_hub.utils import build_hf_headers, hf_raise_for_status  # lazy: as above

    url = hf_hub_url(ident.repo, "config.json", revision=ident.revision)
    try:
        session = get_session()
        try:
            response = session.get(url, headers=build_hf_headers(), timeout=HUB_TIMEOUT_S, follow_redirects=True)
        except TypeError:  # huggingface_hub before 1.0: a requests.Session, which follows redirects itself
            response = session.get(url, headers=build_hf_headers(), timeout=HUB_TIMEOUT_S)
        hf_raise_for_status(response)
        data = response.json()
    except ValueError:
        raise UsageError(f"{ident.label}: the Hub's config.json is not JSON; {config_command(ident)} and pass "
                         "the file, or plan a model folder") from None
    except Exception as exc:  # noqa: BLE001 - huggingface_hub's HTTP and repo errors, one line each
        if type(exc).__name__ in ("EntryNotFoundError", "RemoteEntryNotFoundError"):
            raise UsageError(f"{ident.label}: no config.json on the Hub (a GGUF-only repo?); plan its base model "
                             "instead, e.g. v100-doctor plan ORG/BASE-MODEL") from None
        fix = f"fetch its config.json once where the Hub is reachable ({config_command(ident)}, a few KB)"
        raise UsageError(f"{ident.label}: {_why(exc, ident, fix)}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{ident.label}: the Hub's config.json is not a JSON object")
    return data


def _why(exc: Exception, ident: HubId | None = None, fix: str | None = None) -> str:
    """One line for a failed Hub call; `fix`: what to do when the Hub is unreachable (default: download the model)."""
    kind = type(exc).__name__
    reasons = {"RepositoryNotFoundError": "no such model on the Hub (or it is private: set HF_TOKEN)",
               "GatedRepoError": "the model is gated: accept its licence on the Hub and set HF_TOKEN",
               "RevisionNotFoundError": "no such revision of that model",
               "NotASafetensorsRepoError": "the model has no safetensors weights on the Hub",
               "EntryNotFoundError": "the model has no config.json on the Hub",
               "RemoteEntryNotFoundError": "the model has no config.json on the Hub"}
    if kind in reasons:
        return reasons[kind]
    first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else kind
    how = fix or (f"download it first ({download_command(ident)})" if ident else "download it first")
    return f"cannot reach the Hugging Face Hub ({first}); {how}, or set HF_HUB_OFFLINE=1 to use the cache only"


def resolve(text: str) -> tuple[str, str] | None:
    """(model path for the plan, one line for stderr), or None when `text` is not a Hub id."""
    ident = hub_id(text)
    if ident is None:
        return None
    local = cached_snapshot(ident)
    if local is not None:
        return local, f"--model {ident.label}: read from the Hugging Face cache ({local})"
    if offline():
        raise UsageError(f"--model {ident.label}: not in the Hugging Face cache ({cache_folder()}) and HF_HUB_OFFLINE "
                         f"is set; download it ({download_command(ident)}) or pass its directory")
    header_only(ident)
    return ident.label, (f"--model {ident.label}: not in the Hugging Face cache; planned from its config.json and "
                         "safetensors headers on the Hub, without downloading weights")
