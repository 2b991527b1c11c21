"""The embedded model catalogue (models.json beside this file): the config.json of popular open models as published,
with their common quantized versions, so `plan ORG/NAME` answers offline, without the Hub.

Every entry keeps where its config was read (a URL) and when; fields the source did not give are absent. The file is
read once, on the first lookup (a few milliseconds); `entries()` builds every entry, `lookup()` only the one asked.
Refreshed from the Hub by scripts/refresh_catalogue.py.

    from doctor.facts.catalogue import entries, lookup, model_config, candidates
"""

from __future__ import annotations

from doctor.facts.catalogue.load import CATALOGUE_FILE, CatalogueBroken, candidates, catalogue, entries, lookup, model_config, provenance
from doctor.model.catalogue import Catalogue, CatalogueEntry, CatalogueQuant

__all__ = ["CATALOGUE_FILE", "Catalogue", "CatalogueBroken", "CatalogueEntry", "CatalogueQuant", "catalogue",
           "candidates", "entries", "lookup", "model_config", "provenance"]
