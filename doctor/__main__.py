"""`python -m doctor` is the same as the `v100-doctor` console script."""

from doctor.cli import main

raise SystemExit(main())
