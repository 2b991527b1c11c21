"""A stand-in for torch with only what doctor/probe/exl2_streams.py (and the worker it builds on) touches, so the
ExLlamaV2 streams child runs its real protocol on CPU in CI. FAKE_EXL2_CC="7.0" picks the card's compute capability
(default 9.0); FAKE_NO_CUDA=1 hides the GPU."""

import contextlib
import os

__version__ = "2.99.0+fake"


class OutOfMemoryError(RuntimeError):
    pass


class version:  # noqa: N801 - torch.version's namespace
    cuda = "12.4"


class Tensor:
    """Rows of token ids: the slicing, clamping and item access the prompt and the jobs use."""

    def __init__(self, rows):
        self.rows = [list(r) for r in rows]

    @property
    def shape(self):
        return (len(self.rows), len(self.rows[0]) if self.rows else 0)

    def __getitem__(self, key):
        rows, cols = key
        if isinstance(rows, int):
            return self.rows[rows][cols]
        return Tensor([r[cols] for r in self.rows[rows]])

    def __setitem__(self, key, value):
        self.rows[key[0]][key[1]] = int(value)

    def clamp(self, lo, hi):
        return Tensor([[min(max(v, lo), hi) for v in r] for r in self.rows])

    def clone(self):
        return Tensor(self.rows)


def cat(tensors, dim=-1):
    return Tensor([sum((t.rows[i] for t in tensors), []) for i in range(len(tensors[0].rows))])


def inference_mode():
    return contextlib.nullcontext()


class _Props:
    def __init__(self):
        major, minor = os.environ.get("FAKE_EXL2_CC", "9.0").split(".")
        self.major, self.minor = int(major), int(minor)
        self.name = "Fake GPU"
        self.total_memory = 16 * 2**30


class cuda:  # noqa: N801 - torch.cuda's namespace
    OutOfMemoryError = OutOfMemoryError

    @staticmethod
    def is_available():
        return os.environ.get("FAKE_NO_CUDA") != "1"

    @staticmethod
    def synchronize(_dev=None):
        return None

    @staticmethod
    def reset_peak_memory_stats(_dev=None):
        return None

    @staticmethod
    def empty_cache():
        return None

    @staticmethod
    def device_count():
        return 1

    @staticmethod
    def get_device_properties(_index):
        return _Props()

    @staticmethod
    def max_memory_allocated(_dev=None):
        return 0

    @staticmethod
    def memory_reserved(_dev=None):
        return 0
