"""Print each named package's installed version, or "not installed": the device scripts' record of what ran."""

import sys
from importlib import metadata

for name in sys.argv[1:]:
    try:
        print(name, metadata.version(name))
    except metadata.PackageNotFoundError:
        print(name, "not installed")
