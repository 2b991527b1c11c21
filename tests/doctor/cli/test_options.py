"""The shared argparse types: one check per kind of value, the same for every subcommand."""

from __future__ import annotations

import argparse

import pytest

from doctor.cli.options import encoding_name, finite_float, gpu_index, gpu_split, path_arg, positive_int, seconds_timeout, synthetic_gb


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1e309", "0", "-1", "banana", "", "3601"])
def test_a_timeout_must_be_finite_and_positive(text):
    with pytest.raises(argparse.ArgumentTypeError):
        seconds_timeout(text)


@pytest.mark.parametrize("text", ["nan", "1e309", "10,inf", "10,-1", "10,,14", "0", ",".join(["1"] * 65)])
def test_gpu_split_refuses_non_finite_or_non_positive_shares(text):
    with pytest.raises(argparse.ArgumentTypeError):
        gpu_split(text)


def test_good_values_pass_through():
    assert seconds_timeout("2.5") == 2.5
    assert gpu_split("10,14") == (10.0, 14.0)
    assert synthetic_gb("6") == 6.0
    assert positive_int("8192") == 8192
    assert gpu_index("0") == 0
    assert path_arg("/models/m") == "/models/m"
    assert encoding_name("GBK") == "gbk"


@pytest.mark.parametrize("parse,text", [(positive_int, "9" * 400), (positive_int, "0"), (positive_int, "1.5"),
                                        (gpu_index, "-1"), (gpu_index, "1000"), (synthetic_gb, "nan"),
                                        (path_arg, ""), (path_arg, "  "), (path_arg, "a\0b"),
                                        (encoding_name, "utf-99"), (encoding_name, "base64")])
def test_bad_values_are_refused(parse, text):
    with pytest.raises(argparse.ArgumentTypeError):
        parse(text)


def test_the_bounds_are_in_the_message():
    with pytest.raises(argparse.ArgumentTypeError, match="between 1 and 5"):
        finite_float(1, 5)("7")
