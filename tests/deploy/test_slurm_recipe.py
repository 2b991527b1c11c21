"""The Slurm recipe, end to end, on a real single-node Slurm this test starts (../shared/notes/slurm-local.md).

slurmctld and slurmd run from a private config in a temporary folder on their own ports, and are stopped by
their pidfiles afterwards. Skipped, with the reason, where Slurm cannot start (not root, packages missing).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time

import pytest
from conftest import MACHINES, ROOT

RECIPE = ROOT / "deploy" / "slurm" / "v100-doctor-fleet.sh"
DAEMONS = ("slurmctld", "slurmd", "munged", "srun", "salloc")

CONF = """ClusterName=doctortest
SlurmctldHost={host}
SlurmUser=root
SlurmctldPort={ctl_port}
SlurmdPort={d_port}
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation={d}/ctld
SlurmdSpoolDir={d}/d
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ReturnToService=2
NodeName={host} CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root to start slurmctld/slurmd"
    missing = [d for d in DAEMONS if shutil.which(d) is None]
    if missing:
        return f"Slurm is not installed ({', '.join(missing)} missing; apt-get install slurm-wlm munge)"
    if not os.path.exists("/etc/munge/munge.key"):
        return "no /etc/munge/munge.key (the munge package makes it)"
    return None


def _munge_works() -> bool:
    return subprocess.run("munge -n | unmunge", shell=True, capture_output=True).returncode == 0


def _stop(pidfile: str, wait_s: float = 5.0) -> None:
    """SIGTERM the daemon named by its pidfile, and wait for it to go (the next run reuses nothing of it)."""
    try:
        pid = int(open(pidfile).read().strip())
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError):
        return
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            return
        time.sleep(0.05)


@pytest.fixture
def slurm(tmp_path):
    reason = _why_not()
    if reason:
        pytest.skip(reason)
    started_munge = False
    if not _munge_works():
        os.makedirs("/run/munge", exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")
        subprocess.run(["runuser", "-u", "munge", "--", "munged"], check=False, capture_output=True)
        started_munge = True
        if not _munge_works():
            pytest.skip("munged would not start")
    d = tmp_path / "slurm"
    (d / "ctld").mkdir(parents=True)
    (d / "d").mkdir()
    base = 20000 + (os.getpid() % 5000) * 2  # own ports: another Slurm on this machine is left alone
    conf = d / "slurm.conf"
    conf.write_text(CONF.format(host=socket.gethostname(), ctl_port=base, d_port=base + 1, d=d, cpus=os.cpu_count() or 1))
    env = dict(os.environ, SLURM_CONF=str(conf))
    subprocess.run(["slurmctld", "-f", str(conf)], env=env, check=True, capture_output=True, timeout=20)
    subprocess.run(["slurmd", "-f", str(conf)], env=env, check=True, capture_output=True, timeout=20)
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            out = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True).stdout
            if "idle" in out:
                break
            time.sleep(0.2)
        else:
            pytest.skip(f"the Slurm node never became idle: {out.strip()!r}")
        yield env
    finally:
        _stop(str(d / "slurmd.pid"))
        _stop(str(d / "slurmctld.pid"))
        if started_munge:
            _stop("/run/munge/munged.pid")


def test_recipe_writes_one_report_per_node_then_the_fleet_table(slurm, tmp_path):
    reports = tmp_path / "reports"
    env = dict(slurm, PYTHONPATH=str(ROOT), V100_DOCTOR="python3 -m doctor",
               V100_DOCTOR_ARGS=f"--replay {MACHINES / 'mixed-2080ti-v100.json'}")  # no GPU here: the node replays a box
    proc = subprocess.run(["timeout", "60", "salloc", "-N1", "-n1", "bash", str(RECIPE), str(reports)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 2, proc.stderr  # the fleet's exit code: the mixed box fails on its V100
    assert (reports / f"{socket.gethostname()}.json").exists()  # written by the srun task, named by the node
    assert "cuda-pairing: torch 2.11.0+cu130 has no kernel for sm_70" in proc.stdout
    assert "1 report(s), 1 host(s), 2 GPU row(s)" in proc.stdout
