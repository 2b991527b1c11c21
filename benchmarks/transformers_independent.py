"""An independent timing of Transformers + bitsandbytes NF4 decode, to check the doctor's Transformers probe against.

Imports nothing from the doctor, and times a different code path: `model.generate()` (greedy, EOS never reached,
min_new_tokens = max_new_tokens) with a streamer that stamps each new token with time.perf_counter() after a CUDA
synchronize. Decode tok/s of a run = (tokens after the first - 1) / (time of the last token - time of the first),
so the prompt's prefill is left out as the probe leaves it out. Runs --runs times after one warm-up generate; prints
one JSON line with every run and the median.

  python3 benchmarks/transformers_independent.py --model DIR [--prompt 128] [--tokens 128] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--warmup", type=int, default=128)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()

    import torch
    import transformers
    from transformers.generation.streamers import BaseStreamer

    model = transformers.AutoModelForCausalLM.from_pretrained(
        a.model, device_map={"": 0}, dtype=torch.float16,
        quantization_config=transformers.BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                                            bnb_4bit_compute_dtype=torch.float16))
    model.eval()
    vocab = int(model.config.vocab_size)
    prompt = torch.tensor([[3 + (i * 104729) % (vocab - 3) for i in range(a.prompt)]], device="cuda:0")

    class Stamps(BaseStreamer):
        """generate() hands the prompt first, then each new token: stamp the new ones once the GPU is done."""

        def __init__(self) -> None:
            self.times: list[float] = []
            self.prompt_seen = False

        def put(self, value) -> None:
            if not self.prompt_seen:
                self.prompt_seen = True
                return
            torch.cuda.synchronize()
            self.times.append(time.perf_counter())

        def end(self) -> None:
            pass

    def run(n: int) -> float:
        stamps = Stamps()
        with torch.inference_mode():
            model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=n, min_new_tokens=n,
                           do_sample=False, streamer=stamps, pad_token_id=0)
        assert len(stamps.times) == n, len(stamps.times)
        return (n - 1) / (stamps.times[-1] - stamps.times[0])

    run(a.warmup)
    runs = [run(a.tokens) for _ in range(a.runs)]
    print(json.dumps({"timer": "generate() + streamer stamps", "runs_tok_s": [round(r, 2) for r in runs],
                      "median_tok_s": round(statistics.median(runs), 2), "transformers": transformers.__version__,
                      "torch": torch.__version__, "prompt": a.prompt, "tokens": a.tokens}))


if __name__ == "__main__":
    main()
