"""Planning before the download (`v100-doctor plan`): pure arithmetic over a model's shape, its quantized versions
and the target cards. No I/O: the Hub listing comes in as QuantCandidates (doctor/facts/hub/quants.py)."""
