"""Building better benchmarks: pool runs for judging, judge them, triage false negatives,
remove leakage, cut passages and label them distantly, synthesise zero-answer queries.

One module per step: :mod:`.pool` (the pool file and pooling), :mod:`.judge` (the
judging page and its store), :mod:`.triage` (suspected false negatives),
:mod:`.overlap` (near-duplicates and leakage), :mod:`.passages` and :mod:`.distant`
(passages of controlled length, distant labels by answer-span F1). The last three share
:mod:`.units` (the text units texts are matched by: Chinese characters, English words) and
:mod:`.textset` (the queries or passages of a TSV / JSON-lines file or a dataset).
"""
