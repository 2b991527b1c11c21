# Sourced by the issue-38 device scripts: sets BIN to a folder holding llama-server and llama-batched-bench, either
# P/bin (built earlier, carried) or a static sm_ARCH build of the llama.cpp source tarball P/llama.cpp-src.tar.gz
# in /tmp/b (about 4.5-6.5 min on the H200's 16 cores). Needs P, R, ARCH and log() from the caller.
BIN="$P/bin"
if [ ! -x "$BIN/llama-server" ]; then
  mkdir -p /tmp/src && tar xzf "$P"/llama.cpp-src.tar.gz -C /tmp/src && SRC=$(ls -d /tmp/src/*/ | head -1)
  export CUDACXX=/usr/local/cuda/bin/nvcc PATH=/usr/local/cuda/bin:$PATH
  cmake -S "$SRC" -B /tmp/b -DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DLLAMA_CURL=OFF \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF > "$R/cfg.log" 2>&1; log "cmake rc=$?"
  cmake --build /tmp/b --target llama-server llama-batched-bench -j 16 > "$R/build.log" 2>&1; log "build rc=$?"
  BIN=/tmp/b/bin
fi
