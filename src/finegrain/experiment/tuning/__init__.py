"""Choices made by k-fold cross-validation over queries, each fold's choice made on the other folds:
option grids of a retriever (:mod:`.cv`), score thresholds (:mod:`.threshold`), fusion weights
(:mod:`.fusion_weights`) and fusion routed by query type (:mod:`.routing`), all on one fold maker
(:mod:`.folds`)."""
