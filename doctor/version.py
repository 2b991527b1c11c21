"""The doctor's version, in a module of its own: the model and the renderers read it without importing the
package, whose start-up guard (doctor/__init__.py) touches signals and the process."""

__version__ = "0.1.0"
