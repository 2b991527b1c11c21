"""The one atomic writer: a write cut short (full disk, Ctrl-C, a kill's signal) leaves the old file whole and no
temporary file; every user-facing output path goes through it."""

from __future__ import annotations

import errno
import re

import pytest
from conftest import ROOT

from doctor.facts import archive
from doctor.facts.files.atomic_write import whole_file, write_whole


@pytest.mark.parametrize("cut", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()])
def test_a_write_cut_short_leaves_the_old_file_and_no_temporary(tmp_path, cut):
    target = tmp_path / "report.json"
    target.write_text('{"old": true}\n')
    with pytest.raises(type(cut)):
        with whole_file(target) as fh:
            fh.write('{"new": ')  # half a document, then the disk fills or the user presses Ctrl-C
            raise cut
    assert target.read_text() == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_whole_write_replaces_the_file(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    write_whole(target, "new\n")
    write_whole(tmp_path / "b.bin", b"\x00\x01")
    assert target.read_text() == "new\n" and (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.bin", "r.json"]


def test_an_interrupted_bundle_leaves_no_temporary_file(tmp_path, monkeypatch):
    def interrupted(fh, folder, files):
        fh.write(b"\x1f\x8b partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(archive, "_write_tar", interrupted)
    with pytest.raises(KeyboardInterrupt):
        archive.write_archive(str(tmp_path / "ticket.tar.gz"), "v100-doctor", {"report.json": b"{}"})
    assert list(tmp_path.iterdir()) == []


WRITES = re.compile(r"""open\([^)]*["'][wax]b?["']|\.write_text\(|\.write_bytes\(|mkstemp\(""")


def test_every_user_facing_output_goes_through_the_one_writer():
    """The commands, CLI, TUI, renderers and runs never open a file for writing themselves (a closed stdout or
    stderr replaced by /dev/null is not a file written)."""
    found = [f"{p.relative_to(ROOT)}:{n}" for folder in ("commands", "cli", "tui", "render", "run")
             for p in sorted((ROOT / "doctor" / folder).rglob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1) if WRITES.search(line) and "os.devnull" not in line]
    assert not found, found
    assert WRITES.search('with open(args.output, "w", encoding="utf-8") as fh:')  # the rule sees the old form
