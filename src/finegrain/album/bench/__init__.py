"""Measuring the album engine on PhotoBench-style albums: the evaluation and its analyses, source-type
routing accuracy, albums made unseen (held-out), synthetic albums for latency, and zero-answer queries."""
