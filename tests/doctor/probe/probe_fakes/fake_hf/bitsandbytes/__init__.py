"""A stand-in for bitsandbytes: importable, nothing more."""
