"""Where the doctor runs, read from files: WSL2's kernel, a container's marker, a forward-compatibility libcuda."""

from __future__ import annotations

from doctor.facts.host.runtime_env import compat_libcuda, container_kind, is_wsl


def test_wsl2_is_told_by_its_kernel(tmp_path):
    version, missing = tmp_path / "version", str(tmp_path / "missing")
    version.write_text("Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc (GCC) 11.2.0)\n")
    assert is_wsl(str(version), missing, (), {}) is True
    version.write_text("Linux version 5.15.0-105-generic (buildd@lcy02-amd64-007) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04)\n")
    assert is_wsl(str(version), missing, (), {}) is False
    assert "cannot read" in is_wsl(missing, missing, (), {}).reason


def test_wsl2_is_told_by_any_of_its_marks_when_the_kernel_cannot_be_read(tmp_path):
    """Issue 39: a WSL2 host not recognised was warned about 1 GB 'used by an unknown process' (the Windows
    desktop's share) and told to run sudo nvidia-smi; any of WSL2's marks is enough."""
    missing = str(tmp_path / "missing")
    osrelease = tmp_path / "osrelease"
    osrelease.write_text("5.15.167.4-microsoft-standard-WSL2\n")
    assert is_wsl(missing, str(osrelease), (), {}) is True
    (tmp_path / "lib").mkdir()
    assert is_wsl(missing, missing, (str(tmp_path / "lib"),), {}) is True  # /usr/lib/wsl/lib, /dev/dxg
    assert is_wsl(missing, missing, (), {"WSL_DISTRO_NAME": "Ubuntu-22.04"}) is True
    assert is_wsl(missing, missing, (), {"WSL_DISTRO_NAME": ""}).reason


def test_container_markers(tmp_path):
    assert container_kind(str(tmp_path)) == ""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / ".containerenv").write_text("")
    assert container_kind(str(tmp_path)) == "podman"
    (tmp_path / ".dockerenv").write_text("")
    assert container_kind(str(tmp_path)) == "docker"


def test_the_compat_libcuda_is_found_by_its_versioned_name(tmp_path):
    compat = tmp_path / "cuda-12.4" / "compat"
    compat.mkdir(parents=True)
    assert compat_libcuda({}, (str(tmp_path / "cuda-*/compat/libcuda.so.*"),)) == ""
    (compat / "libcuda.so.1").write_text("")  # the soname link alone says no version
    (compat / "libcuda.so.550.54.14").write_text("")
    assert compat_libcuda({}, (str(tmp_path / "cuda-*/compat/libcuda.so.*"),)).endswith("libcuda.so.550.54.14")
    # an image that prepends its compat directory to LD_LIBRARY_PATH by hand
    assert compat_libcuda({"LD_LIBRARY_PATH": f"/usr/lib:{compat}"}, ()).endswith("libcuda.so.550.54.14")
    assert compat_libcuda({"LD_LIBRARY_PATH": "/usr/lib"}, ()) == ""
