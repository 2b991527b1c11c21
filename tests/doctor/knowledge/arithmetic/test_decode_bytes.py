"""The ceiling, written once: bandwidth ÷ bytes per token, and its inverse per part (read_ms); its callers agree."""

import pytest

from doctor.knowledge.arithmetic.decode_bytes import ceiling_tok_s, read_ms


def test_the_reference_v100_ceiling():
    assert ceiling_tok_s(12.7e9, 900) == pytest.approx(70.866, abs=1e-3)  # the story's 70.9 tok/s
    assert round(ceiling_tok_s(12.7e9, 900), 1) == 70.9


def test_read_ms_is_the_ceilings_inverse():
    assert read_ms(12.7e9, 900) == pytest.approx(1000 / ceiling_tok_s(12.7e9, 900))
    assert read_ms(0, 900) == 0.0
    assert read_ms(9e9, 900) == pytest.approx(10.0)


@pytest.mark.parametrize("total, bw", [(0, 900), (-1, 900), (1e9, 0)])
def test_ceiling_refuses_nonsense(total, bw):
    with pytest.raises(ValueError):
        ceiling_tok_s(total, bw)


def test_the_verdicts_ceiling_is_this_one():
    from doctor.model.verdict import BytesPerToken
    from doctor.verdict.build import _ceiling

    b = BytesPerToken(weights=12.0e9, kv_read=0.7e9, offloaded=0.0, context=4096, cache_mode="q8", source="")
    c = _ceiling(900.0, b, "test")
    assert c.tok_s == round(ceiling_tok_s(12.7e9, 900), 2) and c.tok_s_weights_only == round(ceiling_tok_s(12e9, 900), 2)


def test_a_split_adds_each_gpus_read_time():
    from doctor.knowledge.arithmetic.split_ceiling import GpuShare, SplitCeiling

    s = SplitCeiling((GpuShare(0, "V100", int(7e9), 900.0), GpuShare(1, "P40", int(7e9), 346.0)))
    assert s.ms_per_token == pytest.approx(read_ms(7e9, 900) + read_ms(7e9, 346))
