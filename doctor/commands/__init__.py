"""Subcommands (`v100-doctor NAME ...`): each module has add_arguments(parser) and run(args) -> ExitCode."""
