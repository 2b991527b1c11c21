"""Gatherers: the only code that reads the machine, the model directory or a saved report.

Each returns fact types from doctor.model and never raises for what it finds broken.
"""
