"""exllamav2.attn's detection flags (attn.py in 0.3.2): FAKE_EXL2_FLASH=1 means flash-attn 2.5.7+ imported."""

import os

has_flash_attn = os.environ.get("FAKE_EXL2_FLASH") == "1"
has_flash_attn_with_paged = has_flash_attn
has_xformers = False
has_lower_right_sdpa = True
