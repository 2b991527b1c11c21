"""Python facts: the packages that decide the kernel path, and torch, read statically or in a child process."""
