"""YAML read with limits: nesting depth, aliases, and the size the aliases expand to.

PyYAML's safe_load shares an aliased node rather than copying it, so a "billion laughs" file (nine levels of ten
aliases) loads quickly and then costs gigabytes to walk or to print; 20,000 nested brackets exhaust the stack.
A TabbyAPI config.yml nests ~4 deep with no aliases, so the limits here are far above any real one. A refusal is
a YamlLimit with one line that names the limit, never the (expanded) value.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_DEPTH = 64
MAX_ALIASES = 1_000
MAX_EXPANDED_NODES = 1_000_000  # the nodes a reader would visit with every alias expanded


class YamlLimit(yaml.YAMLError):
    """The document is over one of the limits (`problem` says which, as PyYAML's own errors do)."""

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem


class _BoundedLoader(yaml.SafeLoader):
    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise YamlLimit(f"more than {MAX_ALIASES:,} aliases (*name)")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise YamlLimit(f"nested more than {MAX_DEPTH} levels deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def expanded_nodes(root: yaml.Node) -> int:
    """How many nodes a walk of the document visits with every alias expanded (YamlLimit past the limit or on a
    recursive alias); each shared node is weighed once."""
    weight: dict[int, int] = {}
    visiting: set[int] = set()

    def of(node: yaml.Node) -> int:
        key = id(node)
        if key in weight:
            return weight[key]
        if key in visiting:
            raise YamlLimit("an alias refers to a node that contains it (a recursive alias)")
        visiting.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(of(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(of(k) + of(v) for k, v in node.value)
        visiting.discard(key)
        if total > MAX_EXPANDED_NODES:
            raise YamlLimit(f"its aliases expand to more than {MAX_EXPANDED_NODES:,} values (a 'billion laughs' file)")
        weight[key] = total
        return total

    return of(root)


def load(text: str) -> Any:
    """The document, as yaml.safe_load gives it; YamlLimit (a yaml.YAMLError) past a limit."""
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        expanded_nodes(node)  # depth is bounded by compose_node, so this recursion is too (MAX_DEPTH per alias hop)
        return loader.construct_document(node)
    except RecursionError:
        raise YamlLimit(f"nested more than {MAX_DEPTH} levels deep through its aliases") from None
    finally:
        loader.dispose()
