"""The album engine: the catalog (SQLite or Postgres), the indexer and each photo's profile (places, time
tags, events, faces), the query planner, the tools, the search that fuses them and abstains, and the web page."""
