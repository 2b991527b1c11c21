"""The statically read torch facts (no import) against torch's own answer, with the time each takes.

  python benchmarks/static_arch_check.py      # prints both, and whether they are equal
"""

import importlib.util
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from doctor.facts.python.torch_static import fatbin_archs, read_static  # noqa: E402


def main() -> int:
    root = Path(importlib.util.find_spec("torch").origin).parent
    t0 = time.perf_counter()
    static = read_static(root)
    t_static = time.perf_counter() - t0
    lib = root / "lib" / "libtorch_cuda.so"
    sets = {}
    if lib.exists():
        for cub, ptx in fatbin_archs(lib):
            key = f"cubin {sorted(cub)} ptx {sorted(ptx)}"
            sets[key] = sets.get(key, 0) + 1
    t0 = time.perf_counter()
    import torch

    t_import = time.perf_counter() - t0
    live = {"version": torch.__version__, "cuda": torch.version.cuda or "none", "arch_list": torch.cuda.get_arch_list()}
    same = all(static[k] == live[k] for k in live)
    print(json.dumps({"static": static, "static_s": round(t_static, 4), "torch": live, "import_torch_s": round(t_import, 3),
                      "equal": same, "fatbin_target_sets": dict(sorted(sets.items(), key=lambda kv: -kv[1])[:8]),
                      "library_bytes": lib.stat().st_size if lib.exists() else 0}, indent=2))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
