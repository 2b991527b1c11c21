"""An interrupt while gathering hands back what was read, whichever signal it was."""

import signal

import pytest

from doctor.facts.gather import gather_facts
from doctor.model.errors import Interrupted


class _TorchInterrupted:
    """A torch child whose answer is cut short by `exc` (the signal arriving while the CLI waits on it)."""

    def __init__(self, exc: KeyboardInterrupt):
        self.exc = exc

    def result(self):
        raise self.exc


@pytest.mark.parametrize("exc, signum", [(KeyboardInterrupt(), signal.SIGINT),
                                         (Interrupted(signal.SIGTERM), signal.SIGTERM)])
def test_an_interrupt_carries_the_facts_read_before_it(exc, signum):
    with pytest.raises(Interrupted) as raised:
        gather_facts(torch=_TorchInterrupted(exc))
    facts = raised.value.partial_facts
    assert raised.value.signum == signum
    assert facts.host.hostname  # read before the torch child's answer
    assert not facts.python.torch.installed
    assert facts.python.torch.reason == f"not gathered: the run was interrupted ({signum.name})"
