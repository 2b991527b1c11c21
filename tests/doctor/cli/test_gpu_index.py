"""--gpu N that a saved report does not have is a usage error naming the GPUs it has (issue 26): nvidia-smi on the
engineer's machine cannot help. On a live run gpu-present keeps saying which GPUs NVML sees."""

from __future__ import annotations

from conftest import MACHINES, run_cli

from doctor.cli import main as cli_main

ONE_GPU = str(MACHINES / "v100-torch-2.11-cu130.json")


def test_a_gpu_the_report_lacks_is_exit_3_naming_the_ones_it_has():
    proc = run_cli("--replay", ONE_GPU, "--gpu", "7", "--no-tui")
    assert proc.returncode == 3 and not proc.stdout
    assert proc.stderr.strip().splitlines() == [
        "v100-doctor: error: --gpu 7: the report has GPU 0 (NVML numbers, as recorded); pick one of those, or leave "
        "--gpu out to judge every GPU"]


def test_a_gpu_the_report_has_runs_as_before():
    proc = run_cli("--replay", ONE_GPU, "--gpu", "0", "--no-tui")
    assert proc.returncode == 2 and "gpu-present" in proc.stdout


def test_the_tui_path_refuses_it_before_any_screen(monkeypatch, capsys):
    import importlib

    main_module = importlib.import_module("doctor.cli.main")  # the module, not the function doctor.cli re-exports
    monkeypatch.setattr(main_module, "wants_tui", lambda args: True)
    monkeypatch.setattr(importlib.import_module("doctor.cli.tui"), "run_tui",
                        lambda *a, **k: (_ for _ in ()).throw(AssertionError("a screen opened")))
    assert cli_main(["--replay", ONE_GPU, "--gpu", "7"]) == 3
    assert "--gpu 7: the report has GPU 0" in capsys.readouterr().err
