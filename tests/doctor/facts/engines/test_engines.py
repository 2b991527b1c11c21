"""Engine facts: llama.cpp binaries and libraries, Ollama's version and runners, the archs in a ggml CUDA library."""

from __future__ import annotations

from pathlib import Path

from elf_support import container, elf_with_fatbin, entry

from doctor.facts.engines.installed import engine_env, gather_llama_cpp, gather_ollama, parse_ollama_version, read_cuda_library
from doctor.facts.python.torch_static import KIND_CUBIN, KIND_PTX
from doctor.model.unknown import Unknown


def ggml_lib(path: Path, cubins: tuple[int, ...], ptx: tuple[int, ...] = ()) -> Path:
    # ggml compiles each of its kernel files for every target: several containers, the same targets in each
    one = container(*[entry(KIND_CUBIN, a) for a in cubins], *[entry(KIND_PTX, a) for a in ptx])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(elf_with_fatbin(one + one))
    return path


def test_archs_are_read_from_the_fat_binary(tmp_path):
    lib = read_cuda_library(ggml_lib(tmp_path / "libggml-cuda.so", (75, 80, 90), (90,)))
    assert lib.cubins == (75, 80, 90) and lib.ptx == (90,)


def test_a_library_without_cuda_code_or_unreadable_is_unknown(tmp_path):
    plain = tmp_path / "libggml-cuda.so"
    plain.write_bytes(elf_with_fatbin(b""))
    assert isinstance(read_cuda_library(plain).cubins, Unknown)
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"not an elf at all, padded" * 10)
    assert "unreadable" in read_cuda_library(junk).cubins.reason


def test_llama_cpp_binaries_and_the_library_beside_them(tmp_path):
    server = tmp_path / "opt" / "bin" / "llama-server"
    server.parent.mkdir(parents=True)
    server.write_text("#!/bin/sh\n")
    ggml_lib(tmp_path / "opt" / "lib" / "libggml-cuda.so", (61, 70))
    facts = gather_llama_cpp(which=lambda name: str(server) if name == "llama-server" else None)
    assert facts.binaries == {"llama-server": str(server)} and facts.installed
    assert [lib.cubins for lib in facts.cuda_libraries] == [(61, 70)]


def test_a_static_llama_cpp_build_carries_its_cuda_code_in_the_binary(tmp_path):
    """No libggml-cuda.so beside llama-server: a static build (BUILD_SHARED_LIBS=OFF) is read from the binary itself;
    a binary without a fat binary is a CPU-only build (issue 35)."""
    server = ggml_lib(tmp_path / "static" / "bin" / "llama-server", (70, 75))
    facts = gather_llama_cpp(which=lambda name: str(server) if name == "llama-server" else None)
    assert [lib.cubins for lib in facts.cuda_libraries] == [(70, 75)]
    cpu = tmp_path / "cpu" / "bin" / "llama-server"
    cpu.parent.mkdir(parents=True)
    cpu.write_bytes(elf_with_fatbin(b""))
    assert gather_llama_cpp(which=lambda name: str(cpu) if name == "llama-server" else None).cuda_libraries == ()


def test_nothing_installed(tmp_path):
    facts = gather_llama_cpp(which=lambda name: None)
    assert facts.binaries == {} and facts.cuda_libraries == ()
    assert not gather_ollama(which=lambda name: None).installed


def test_ollama_version_and_runner_folders(tmp_path):
    binary = tmp_path / "usr" / "bin" / "ollama"
    binary.parent.mkdir(parents=True)
    binary.write_text("")
    lib = tmp_path / "usr" / "lib" / "ollama"
    ggml_lib(lib / "cuda_v13" / "libggml-cuda.so", (75, 80, 90, 100, 120), (120,))
    (lib / "cpu").mkdir()
    calls = []

    def run(cmd, timeout_s):
        calls.append(cmd)
        return 0, "", "Warning: could not connect to a running Ollama instance\nWarning: client version is 0.33.0\n" \
                     "ollama version is 0.33.0\n"

    o = gather_ollama(which=lambda name: str(binary), run=run)
    assert calls == [[str(binary), "--version"]]
    assert o.version == "0.33.0" and o.runners == ("cpu", "cuda_v13")
    assert [(x.runner, x.cubins) for x in o.cuda_libraries] == [("cuda_v13", (75, 80, 90, 100, 120))]


def test_ollama_version_text():
    assert parse_ollama_version("ollama version is 0.12.3") == "0.12.3"
    assert isinstance(parse_ollama_version("command not found"), Unknown)


def test_environment_keeps_engine_settings_and_drops_secrets():
    env = {"GGML_CUDA_FORCE_MMQ": "1", "OLLAMA_FLASH_ATTENTION": "1", "OLLAMA_API_KEY": "x", "HOME": "/root",
           "LLAMA_ARG_N_GPU_LAYERS": "99", "CUDA_VISIBLE_DEVICES": "0"}
    assert engine_env(env) == {"CUDA_VISIBLE_DEVICES": "0", "GGML_CUDA_FORCE_MMQ": "1", "LLAMA_ARG_N_GPU_LAYERS": "99",
                               "OLLAMA_FLASH_ATTENTION": "1"}
