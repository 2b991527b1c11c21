"""A stand-in for torch with only what doctor/probe/transformers_child.py touches, so its protocol runs on CPU in CI.

Each forward pass sleeps FAKE_STEP_S (default 2 ms): the child's clocks then read about 1 / FAKE_STEP_S tok/s.
FAKE_HF_FAIL=oom|load|decode makes the model fail where a real one would.
"""

import contextlib
import os
import time

float16 = "float16"
__version__ = "2.99.0+fake"


class OutOfMemoryError(RuntimeError):
    pass


class _Tensor:
    def __init__(self, shape=(1, 1), nbytes_each=2, cuda=True, value=5):
        self.shape, self._each, self.is_cuda, self.value = tuple(shape), nbytes_each, cuda, value

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def element_size(self):
        return self._each

    def __getitem__(self, _):
        return self

    def argmax(self, _dim):
        return _Tensor((1, 1), 8, value=self.value)

    def __int__(self):
        return self.value


def tensor(rows, device=None):
    return _Tensor((len(rows), len(rows[0])), 8)


def ones_like(t):
    return _Tensor(t.shape, 8, value=1)


def device(kind, index=0):
    return f"{kind}:{index}"


def inference_mode():
    return contextlib.nullcontext()


class _Event:
    def __init__(self, enable_timing=False):
        self.t = 0.0

    def record(self):
        self.t = time.perf_counter()

    def elapsed_time(self, end):
        return (end.t - self.t) * 1000.0


class cuda:  # noqa: N801 - torch.cuda's namespace
    OutOfMemoryError = OutOfMemoryError
    Event = _Event

    @staticmethod
    def is_available():
        return os.environ.get("FAKE_NO_CUDA") != "1"

    @staticmethod
    def synchronize(_dev=None):
        return None
