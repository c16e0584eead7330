"""The personal album engine: catalog, indexer, profile (places, time tags, events, faces), planner."""
