"""The ordered checks: pure functions of (Facts, Plan) -> Finding, and the knowledge they use.

A check is one module in one of the groups below, declaring `CHECK = Check(id=CheckId("its-id"), ..., order=N)`;
`scripts/generate_registry.py` writes the registry (checks/manifest.py) and its CheckId member from it.
"""

# the groups, each a package here, in the order they run: environment first, then several GPUs, then the model, the
# engine, runtime health, an engine server's load, and whether the timed probe can run
GROUPS = ("env", "multi_gpu", "model", "engine", "runtime", "serving", "probe")
