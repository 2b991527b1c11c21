"""The ordered checks: pure functions of (Facts, Plan) -> Finding, and the knowledge they use."""
