"""File plumbing for gatherers: bounded and safe reads (YAML, logs, regular files) and the one atomic writer."""
