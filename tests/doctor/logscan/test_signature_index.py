"""The one-search signature index picks exactly the signatures whose anchors a line holds, in their order."""

from doctor.knowledge.signatures import LOG_SIGNATURES
from doctor.logscan.keywords import SignatureIndex

LINES = ["runtimeerror: cuda error: no kernel image is available for execution on the device",
         "torch.outofmemoryerror: cuda out of memory. tried to allocate 64.00 mib", "info: nothing here", ""]


def test_the_index_and_the_fallback_agree_with_testing_each_signature():
    fast, plain = SignatureIndex(LOG_SIGNATURES), SignatureIndex(LOG_SIGNATURES, accelerated=False)
    for low in LINES:
        brute = [s.id for s in LOG_SIGNATURES if any(a in low for a in s.anchors)]
        assert [s.id for s, _ in fast.of(low)] == brute == [s.id for s, _ in plain.of(low)]
