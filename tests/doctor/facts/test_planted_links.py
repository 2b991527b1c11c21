"""-o never writes through a link, FIFO or device another user planted in a shared sticky folder (/tmp), as the
kernel's protected_symlinks and protected_fifos refuse; -o /dev/stdout and links the user owns still work (issue 39).
The planted entries need another owner: these tests chown, so they run as root (CI runs the suite as root)."""

from __future__ import annotations

import os
import stat

import pytest
from conftest import MACHINES, run_cli

from doctor.facts.files.atomic_write import refuse_planted, write_whole

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="planting another user's link needs chown (root)")
MALLORY, DIR_OWNER = 4242, 4343


def _shared(tmp_path, owner: int = DIR_OWNER):
    d = tmp_path / "shared-tmp"
    d.mkdir()
    os.chmod(d, 0o1777)  # world-writable and sticky, as /tmp
    os.chown(d, owner, owner)
    return d


def _planted_link(shared, name: str, target) -> str:
    link = shared / name
    os.symlink(target, link)
    os.lchown(link, MALLORY, MALLORY)
    return str(link)


@root_only
@pytest.mark.parametrize("via", ["file", "folder"])
def test_a_link_another_user_planted_is_refused_and_its_target_untouched(tmp_path, via):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "shadow").write_text("root's secrets\n")
    shared = _shared(tmp_path)
    if via == "file":
        path = _planted_link(shared, "report.json", victim / "shadow")
    else:  # -o /tmp/evil/shadow where /tmp/evil -> the victim's folder
        path = os.path.join(_planted_link(shared, "evil", victim), "shadow")
    with pytest.raises(PermissionError):
        write_whole(path, "{}\n")
    proc = run_cli("--replay", str(MACHINES / "v100-pcie-16gb-healthy.json"), "--json", "-o", path)
    assert proc.returncode == 3 and "another user" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert (victim / "shadow").read_text() == "root's secrets\n" and sorted(os.listdir(victim)) == ["shadow"]


@root_only
def test_a_fifo_another_user_planted_is_refused_not_hung_on(tmp_path):
    shared = _shared(tmp_path)
    fifo = shared / "report.json"
    os.mkfifo(fifo)
    os.chown(fifo, MALLORY, MALLORY)
    proc = run_cli("--replay", str(MACHINES / "v100-pcie-16gb-healthy.json"), "-o", str(fifo), timeout=60)
    assert proc.returncode == 3 and "another user" in proc.stderr, proc.stderr


@root_only
@pytest.mark.parametrize("link_owner", ["me", "folder owner"])
def test_links_the_kernel_would_follow_are_followed(tmp_path, link_owner):
    target = tmp_path / "mine.json"
    shared = _shared(tmp_path)
    link = shared / "report.json"
    os.symlink(target, link)
    uid = os.geteuid() if link_owner == "me" else DIR_OWNER
    os.lchown(link, uid, uid)
    write_whole(str(link), "{}\n")
    assert target.read_text() == "{}\n"


def test_links_outside_shared_folders_and_dev_stdout_are_followed(tmp_path):
    target = tmp_path / "real.json"
    os.symlink(target, tmp_path / "link.json")
    write_whole(str(tmp_path / "link.json"), "{}\n")
    assert target.read_text() == "{}\n"
    refuse_planted("/dev/stdout")  # no error
    refuse_planted(str(tmp_path / "not" / "there" / "yet.json"))  # nothing on the way: the writer says why not


def test_the_rule_is_the_kernels(monkeypatch):
    """Unit of the rule with made-up owners, so it runs as any user."""
    from doctor.facts.files import atomic_write

    monkeypatch.setattr(atomic_write.os, "geteuid", lambda: 1000)

    def st(mode: int, uid: int) -> os.stat_result:
        return os.stat_result((mode, 0, 0, 0, uid, uid, 0, 0, 0, 0))

    sticky, plain = stat.S_IFDIR | 0o1777, stat.S_IFDIR | 0o777
    assert atomic_write._shared_and_not_theirs(st(sticky, 0), st(stat.S_IFLNK, 4242))
    assert not atomic_write._shared_and_not_theirs(st(sticky, 0), st(stat.S_IFLNK, 1000))  # mine
    assert not atomic_write._shared_and_not_theirs(st(sticky, 4242), st(stat.S_IFLNK, 4242))  # the folder owner's
    assert not atomic_write._shared_and_not_theirs(st(plain, 0), st(stat.S_IFLNK, 4242))  # not sticky
    assert not atomic_write._shared_and_not_theirs(st(stat.S_IFDIR | 0o1755, 0), st(stat.S_IFLNK, 4242))  # not shared
