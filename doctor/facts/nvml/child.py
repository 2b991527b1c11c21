"""Runs in a child process: reads the NVML snapshot and prints it as one JSON line.

libnvidia-ml.so is native code from the machine being diagnosed: it can hang in nvmlInit (a GPU in a bad
state), segfault (a broken or mismatched driver) or report absurd counts. Here it can only cost the parent
a deadline (doctor/facts/nvml/isolated.py), never the parent's report.
"""

from __future__ import annotations

import json
import sys

from doctor.facts.nvml.snapshot import gather_nvml
from doctor.model.serialize import to_jsonable

MARKER = "@@NVML_FACTS@@"


def main() -> None:
    facts = gather_nvml()
    sys.stdout.write("\n" + MARKER + json.dumps(to_jsonable(facts)) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
