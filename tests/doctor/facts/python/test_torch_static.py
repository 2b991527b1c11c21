"""The static torch reader on a hand-built wheel directory: version.py text and an ELF with fat binaries."""

import os
import struct

import pytest
from elf_support import container, elf_with_fatbin, entry

from doctor.facts.python.torch_static import FATBIN_MAGIC, KIND_CUBIN, KIND_PTX, StaticReadError, arch_list, read_static


def wheel(tmp_path, fatbin: bytes | None, cuda: str | None = "13.0"):
    (tmp_path / "lib").mkdir()
    (tmp_path / "version.py").write_text(f"__version__ = '2.11.0+cu130'\ndebug = False\ncuda: Optional[str] = {cuda!r}\n")
    if fatbin is not None:
        (tmp_path / "lib" / "libtorch_cuda.so").write_bytes(elf_with_fatbin(fatbin))
    return tmp_path


def test_commonest_target_set_is_the_arch_list(tmp_path):
    torch_own = container(*(entry(KIND_CUBIN, a) for a in (75, 80, 90, 120)))
    vendored = container(entry(KIND_CUBIN, 90), entry(KIND_CUBIN, 100))
    wheel(tmp_path, torch_own * 3 + vendored)
    assert arch_list(tmp_path) == ["sm_75", "sm_80", "sm_90", "sm_120"]


def test_ptx_entries_give_compute_targets(tmp_path):
    wheel(tmp_path, container(entry(KIND_CUBIN, 70), entry(KIND_PTX, 90)))
    assert arch_list(tmp_path) == ["sm_70", "compute_90"]


def test_cpu_wheel_reads_version_and_an_empty_arch_list(tmp_path):
    data = read_static(wheel(tmp_path, None, cuda=None))
    assert (data["version"], data["cuda"], data["arch_list"]) == ("2.11.0+cu130", "none", [])


def test_a_container_of_size_zero_stops_the_reader(tmp_path):
    """hsize 0 and size 0 would read the same header forever (1.2 GB in 30 s before the bound)."""
    looping = struct.pack("<IHHQ", FATBIN_MAGIC, 1, 0, 0) + b"\0" * 48
    wheel(tmp_path, looping)
    with pytest.raises(StaticReadError, match="size 0"):
        arch_list(tmp_path)


@pytest.mark.parametrize("name", ["version.py", "lib/libtorch_cuda.so"])
def test_a_fifo_in_the_wheel_is_refused_without_blocking(tmp_path, name):
    wheel(tmp_path, container(entry(KIND_CUBIN, 70)))
    (tmp_path / name).unlink()
    os.mkfifo(tmp_path / name)
    with pytest.raises(StaticReadError, match="FIFO"):
        read_static(tmp_path)  # a blocking open would hang here: no writer ever comes
