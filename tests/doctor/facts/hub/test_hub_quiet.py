"""huggingface_hub's raw retry lines never reach the user's terminal; one line of the doctor's own says what
happened and the fix (issue 39: "Retrying in 1s [Retry 1/5]" was printed as is)."""

from __future__ import annotations

import pytest

from doctor.facts.hub.quiet import hub_quiet
from doctor.model.errors import UsageError


def _hub_logs_a_retry() -> None:
    from huggingface_hub.utils import logging as hub_logging

    hub_logging.get_logger("huggingface_hub.utils._http").warning("Retrying in 1s [Retry 1/5].")
    hub_logging.get_logger("huggingface_hub.utils._http").warning("'timed out' thrown while requesting HEAD https://x")


def test_retries_become_one_line_of_the_doctors(capfd):
    with hub_quiet():
        _hub_logs_a_retry()
    err = capfd.readouterr().err
    assert "Retrying in" not in err and "thrown while requesting" not in err
    (line,) = err.strip().splitlines()
    assert line.startswith("v100-doctor: the Hugging Face Hub was slow to answer (1 retries)") and "HF_HUB_OFFLINE=1" in line


def test_the_hubs_logger_is_given_back(capfd):
    import logging

    hub = logging.getLogger("huggingface_hub")
    before = (list(hub.handlers), hub.propagate)
    with pytest.raises(RuntimeError), hub_quiet():
        _hub_logs_a_retry()
        raise RuntimeError("the call failed")
    assert (list(hub.handlers), hub.propagate) == before
    assert capfd.readouterr().err == ""  # a failure: the caller's own one-line error says why


@pytest.mark.parametrize("where", ["header_only", "plan"])
def test_the_doctors_hub_calls_are_quiet(monkeypatch, capfd, where):
    import huggingface_hub

    def flaky(*args, **kwargs):
        _hub_logs_a_retry()
        raise ConnectionError("the network is down")

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub, "get_safetensors_metadata", flaky)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", flaky)
    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", lambda *a, **k: None)
    if where == "header_only":
        from doctor.facts.hub.model_id import HubId, header_only

        with pytest.raises(UsageError, match="cannot reach the Hugging Face Hub"):
            header_only(HubId("org/quiet-model-test", None))
    else:
        from doctor.facts.hub.quants import discover

        with pytest.raises(UsageError, match="cannot reach the Hugging Face Hub"):
            discover("org/quiet-model-test")
    err = capfd.readouterr().err
    assert "Retrying in" not in err and "thrown while requesting" not in err
