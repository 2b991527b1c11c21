/* A libnvidia-ml.so.1 that misbehaves as FAKE_NVML says, for tests/robustness (compiled by fake_nvml_lib.py).
 *   hang     nvmlInitWithFlags never returns
 *   crash    nvmlInitWithFlags segfaults
 *   count    nvmlDeviceGetCount_v2 says 4,294,967,295 GPUs
 *   mig      one GPU in MIG mode with 2^31 MIG slots
 *   lost     one GPU whose every reading answers NVML_ERROR_GPU_IS_LOST
 *   lostlater  one GPU lost after its name was read (MIG mode, the last reading of a snapshot, answers "lost")
 *   lostsampling  one GPU lost from the second utilisation reading of a process on (the snapshot child reads it
 *            once; watch's sampler reads it every tick)
 *   hangsampling, crashsampling  likewise, but that reading never returns, or segfaults
 *   FAKE_NVML_AFTER=N  the three *sampling modes misbehave from the (N+1)th utilisation reading on (default 1), so
 *            a sampler that reads it once per tick gets N whole samples first
 *   escape   one GPU whose name holds terminal escapes (OSC 52, a screen clear)
 *   ok       one plain GPU
 * Every other NVML function is absent, which pynvml reports as "function not found". */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;
static int handle_token;

static const char *mode(void) { const char *m = getenv("FAKE_NVML"); return m ? m : "ok"; }
static int is(const char *m) { return strcmp(mode(), m) == 0; }
static nvmlReturn_t put(char *dst, unsigned n, const char *src) {
    if (n == 0) return 8; /* INSUFFICIENT_SIZE */
    strncpy(dst, src, n - 1); dst[n - 1] = 0; return 0;
}

nvmlReturn_t nvmlInitWithFlags(unsigned flags) {
    (void)flags;
    if (is("hang")) for (;;) pause();
    if (is("crash")) { volatile int *p = 0; *p = 1; raise(SIGSEGV); }
    return 0;
}
nvmlReturn_t nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
nvmlReturn_t nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(nvmlReturn_t r) { return r == 15 ? "GPU is lost" : "fake NVML error"; }
nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned n) { return put(v, n, "550.54.15"); }
nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned n) { return put(v, n, "12.550.54.15"); }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *count) { *count = is("count") ? 4294967295u : 1; return 0; }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *h) {
    if (i != 0) return 2; /* INVALID_ARGUMENT */
    *h = &handle_token; return 0;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char *name, unsigned n) {
    (void)h;
    if (is("lost")) return 15;
    if (is("escape")) return put(name, n, "Tesla V100\x1b]52;c;cHduZWQ=\x07\x1b[2J</details><h1>x");
    return put(name, n, "Tesla V100-SXM2-16GB");
}
typedef struct { unsigned gpu, memory; } nvmlUtilization_t;
static int utilization_calls;
static int after(void) { const char *a = getenv("FAKE_NVML_AFTER"); return a ? atoi(a) : 1; }
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t h, nvmlUtilization_t *u) {
    (void)h;
    if (is("lost")) return 15;
    if ((is("lostsampling") || is("hangsampling") || is("crashsampling")) && ++utilization_calls > after()) {
        if (is("hangsampling")) for (;;) pause();
        if (is("crashsampling")) { volatile int *p = 0; *p = 1; raise(SIGSEGV); }
        return 15;
    }
    u->gpu = 50; u->memory = 20; return 0;
}
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t h, unsigned *current, unsigned *pending) {
    (void)h;
    if (is("lost") || is("lostlater")) return 15;
    *current = *pending = is("mig") ? 1 : 0; return 0;
}
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t h, unsigned *count) { (void)h; *count = 1u << 31; return 0; }
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t h, unsigned i, nvmlDevice_t *mig) {
    (void)h; (void)i; (void)mig; return 3; /* NOT_SUPPORTED: each slot costs a call, so the count must be bounded */
}
