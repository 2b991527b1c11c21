"""Messages a container or the kernel wrapped over several lines keep their numbers: the scanner joins continuations."""

from __future__ import annotations

import io

import pytest

from doctor.commands.log_input import open_log
from doctor.logscan.scanner import Scanner


def scan(text: str):
    return Scanner().scan(open_log("-", stdin=io.BytesIO(text.encode())))


def found(text: str) -> dict:
    return {m.signature: m for m in scan(text).matches}


def test_a_docker_wrapped_message_is_joined():
    m = found("vllm-1  | RuntimeError: ('Quantization scheme is not supported for ',\n"
              "vllm-1  | 'the current GPU. Min capability: 75. ', 'Current capability: 70.')\n")
    assert m["vllm-quant-scheme-min-capability"].numbers == {"min_cc": "7.5", "card_cc": "7.0"}
    assert m["vllm-quant-scheme-min-capability"].first_line == 1


def test_the_join_that_fills_more_groups_wins():
    # the line alone matches (the card's name and cc are optional); the join adds them
    m = found("ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0.\n"
              "  Your Tesla T4 GPU has compute capability 7.5.\n")
    assert m["vllm-bf16-needs-cc80"].numbers == {"min_cc": "8.0", "gpu_name": "Tesla T4", "card_cc": "7.5"}


@pytest.mark.parametrize("second", ["INFO 09-05 11:21:09 config.py:887] Your Tesla T4 GPU has compute capability 7.5.",
                                    "Your Tesla T4 GPU has compute capability 7.5."])  # a level; a plain unindented line
def test_a_new_record_ends_the_join(second):
    m = found("ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0.\n" + second + "\n")
    assert m["vllm-bf16-needs-cc80"].numbers == {"min_cc": "8.0"}


def test_a_match_must_start_in_the_line_itself():
    # the anchor is on line 1, but the whole message is on line 2: line 2 matches it alone, line 1 does not
    result = scan("Bfloat16 note follows\n"
                  "  Bfloat16 is only supported on GPUs with compute capability of at least 8.0.\n")
    (m,) = result.matches
    assert (m.signature, m.first_line, m.count) == ("vllm-bf16-needs-cc80", 2, 1)


def test_follow_up_lines_are_read_until_every_number_is_found():
    m = found("torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n"
              "Currently allocated     : 15.38 GiB\nRequested               : 136.00 MiB\n"
              "Device limit            : 15.77 GiB\nFree (according to CUDA): 0 bytes\n")
    assert m["cuda-malloc-async-oom"].numbers == {"gpu_index": 0, "allocated_mib": 15749.12, "tried_mib": 136.0,
                                                  "total_mib": 16148.48, "free_mib": 0.0}
