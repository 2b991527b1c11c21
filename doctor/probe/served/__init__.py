"""The probe of a running engine server (--engine-url): an engine the doctor cannot start itself (Ollama's own
server, llama-server, vLLM, TabbyAPI, LM Studio) is asked through its own API, with short deadlines and bounded
answers. `identify` says which server answers (before the checks, so they judge its engine); `timing` times its
decode (in the Run's probe stage). Every network read of the doctor's engine probes is here; the judgement is pure
(doctor/verdict/served.py)."""
