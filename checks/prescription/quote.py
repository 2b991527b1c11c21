"""How a check quotes the machine's route, so every check gives the same commands for one problem."""

from __future__ import annotations

from doctor.model.prescription import Prescription, Route, Step


def step_lines(step: Step) -> list[str]:
    """Shell lines for one step: a manual action as a comment, then the command."""
    lines = [f"# {step.action}"] if step.action else []
    return lines + ([step.command] if step.command else [])


def route_lines(route: Route) -> list[str]:
    return [line for s in route.steps for line in step_lines(s)]


def route_fix(rx: Prescription) -> tuple[str, list[str]]:
    """(fix text, commands) for a finding: the preferred route's lines; an alternative is named."""
    if not rx.routes:
        return (rx.note, [])
    first = rx.routes[0]
    text = f"Route \"{first.name}\" ({first.cost}): " + "; ".join(f"{i}. {s.changes}" for i, s in enumerate(first.steps, 1)) + "."
    if len(rx.routes) > 1:
        text += " Or: " + "; ".join(f"\"{r.name}\" ({r.cost})" for r in rx.routes[1:]) + "."
    text += " The same route is printed once at the end (\"Do this, in this order\")."
    return text, route_lines(first)
