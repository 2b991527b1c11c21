"""One consistent, minimal prescription per machine: structured problems (problems.py) -> one route or two (route.py)."""
