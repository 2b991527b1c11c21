"""Runs in a child process: imports torch and prints its facts as one JSON line.

Kept tiny and dependency-free so a broken torch, a crashing CUDA init or a hang only
costs the parent a timeout. `--static-only` skips CUDA initialisation.
"""

import json
import sys
import warnings


def main() -> None:
    out: dict = {"ok": False}
    captured: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import torch  # lazy: torch takes seconds and may crash: imported inside the try that reports it

            out.update(
                ok=True,
                version=str(torch.__version__),
                cuda=torch.version.cuda or "none",
                location=torch.__file__,
            )
            try:
                out["arch_list"] = list(torch.cuda.get_arch_list())
            except Exception as exc:
                out["arch_list_error"] = f"{type(exc).__name__}: {exc}"
            if "--static-only" not in sys.argv:
                out["cuda_available"] = bool(torch.cuda.is_available())
                count = torch.cuda.device_count() if out["cuda_available"] else 0
                out["device_count"] = count
                caps = []
                for i in range(count):
                    try:  # first CUDA init happens here; torch warns about unsupported cards now
                        major, minor = torch.cuda.get_device_capability(i)
                        caps.append(f"{major}.{minor}")
                    except Exception as exc:
                        captured.append(f"device {i}: {type(exc).__name__}: {exc}")
                out["device_capabilities"] = caps
        captured.extend(str(w.message) for w in caught)
    except BaseException as exc:  # noqa: BLE001 - report anything, including SystemExit from a broken install
        out["error"] = f"{type(exc).__name__}: {exc}"
    out["warnings"] = captured
    sys.stdout.write("\n@@TORCH_FACTS@@" + json.dumps(out) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
