"""Sizes are written one way: decimal GB beside GB/s, the largest decimal unit for a loose size."""

import pytest

from doctor.model.units import GB, GIB, MIB, gb, human_bytes


def test_binary_units():
    assert (MIB, GIB) == (2**20, 2**30)


@pytest.mark.parametrize("n, digits, text", [(12.7e9, 1, "12.7 GB"), (12.74e9, 2, "12.74 GB"), (0.0, 1, "0.0 GB"),
                                             (GIB, 2, "1.07 GB"), (-3e9, 1, "-3.0 GB")])
def test_gb(n, digits, text):
    assert gb(n, digits) == text


@pytest.mark.parametrize("n, text", [(4.125 * GB, "4.12 GB"), (512e6, "512.00 MB"), (1536, "1.54 kB"), (999, "999 B")])
def test_human_bytes(n, text):
    assert human_bytes(n) == text
