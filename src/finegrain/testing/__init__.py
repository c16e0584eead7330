"""Test helpers that ship with finegrain: the seeded loader fuzzer (``finegrain.testing.fuzz``)."""
