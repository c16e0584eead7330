"""Fusion of runs: the methods (:mod:`.methods`: RRF, convex combinations, CombSUM/MNZ/MAX, ``fuse``),
the retriever that fuses its parts (:mod:`.hybrid`), named fusions with their fixed settings
(:mod:`.presets`), and fusion routed by query type (:mod:`.routed`)."""
