"""The personal photo album: the engine (:mod:`.engine`) and its benchmark on PhotoBench-style albums
(:mod:`.bench`), which only reads the engine."""
