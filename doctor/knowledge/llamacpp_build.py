"""llama.cpp's rebuild commands, spelled once: the adapter's fixes, its log fixes and the signature rows of `explain`
all print these (here, below the engines, so the knowledge rows can use them too)."""

from __future__ import annotations

# llama.cpp's build guide: -DGGML_CUDA=ON, and CMAKE_CUDA_ARCHITECTURES naming the card
BUILD_DOC = "https://github.com/ggml-org/llama.cpp/blob/master/docs/build.md"
# llama-cpp-python's README: CMake options go in CMAKE_ARGS; --force-reinstall --no-cache-dir rebuilds the wheel
PYTHON_DOC = "https://github.com/abetlen/llama-cpp-python#installation-configuration"
# {arch}: the cc without its dot (70)
REBUILD_CMAKE = "cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES={arch} && cmake --build build -j"
REBUILD_PIP = ('CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES={arch}" pip install --force-reinstall '
               "--no-cache-dir llama-cpp-python")
