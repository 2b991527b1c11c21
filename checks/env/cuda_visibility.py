"""Which of NVML's GPUs CUDA (torch, ExLlamaV2, vLLM) can see under the recorded CUDA_VISIBLE_DEVICES, and the
shell lines that show the cards again.

NVIDIA: "If the variable is set to an empty string, no GPU devices are visible", and an index that does not exist
ends the list; nvidia-smi and NVML ignore the variable, so the doctor sees cards that every CUDA program here cannot.
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.knowledge.arithmetic.gpu_numbering import CUDA_ENV_DOC, cuda_numbering
from doctor.model.facts import Facts
from doctor.model.unknown import known, show


@dataclass(frozen=True)
class Visibility:
    value: str  # CUDA_VISIBLE_DEVICES as recorded
    visible: tuple[int, ...]  # NVML indices CUDA sees, in CUDA's order
    hidden: tuple[int, ...]  # NVML indices it does not
    names: dict[int, str]

    @property
    def hides_all(self) -> bool:
        return not self.visible and bool(self.hidden)

    def hidden_text(self) -> str:
        return ", ".join(f"NVML {i} {self.names[i]}" for i in self.hidden)

    def evidence(self) -> dict:
        return {"cuda_visible_devices": self.value, "visible_nvml": list(self.visible), "hidden_nvml": list(self.hidden),
                "source": CUDA_ENV_DOC}


def visibility(facts: Facts) -> Visibility | None:
    """None when CUDA_VISIBLE_DEVICES is not set (CUDA sees every card) or NVML saw no GPU."""
    env = facts.python.env
    if "CUDA_VISIBLE_DEVICES" not in env or not facts.nvml.gpus:
        return None
    gpus = facts.nvml.gpus
    n = cuda_numbering(gpus, env)
    visible = tuple(d.nvml_index for d in n.devices)
    return Visibility(env["CUDA_VISIBLE_DEVICES"], visible, tuple(g.index for g in gpus if g.index not in visible),
                      {g.index: show(g.name) for g in gpus})


def show_cards_fix(want: tuple[int, ...], facts: Facts) -> tuple[str, list[str]]:
    """Fix text and lines that make CUDA see NVML's cards `want` (in that order), in this shell's syntax."""
    uuids = {g.index: g.uuid for g in facts.nvml.gpus if known(g.uuid)}
    value = ",".join(str(uuids[i]) if i in uuids else str(i) for i in want)
    return ("CUDA_VISIBLE_DEVICES hides the card(s) from every CUDA program (torch, ExLlamaV2, vLLM) while nvidia-smi "
            "still lists them: unset it, or list the GPUs to use (their UUIDs from `nvidia-smi -L` are unambiguous) "
            "in the shell or service that starts the server.",
            ["unset CUDA_VISIBLE_DEVICES", f"export CUDA_VISIBLE_DEVICES={value}", "nvidia-smi -L"])
