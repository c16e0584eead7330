"""The conductor: one experiment from a dataset to saved results, and what it runs on.

* :mod:`.run` -- :func:`~finegrain.experiment.run.run_experiment`: load the dataset, retrieve, score,
  diagnose, save (what ``finegrain eval`` does);
* :mod:`.tuning` -- every choice made on the other folds: retriever option grids, thresholds, fusion
  weights, routing by query type;
* :mod:`.executors` -- where the expensive stages run: this process, or a Ray cluster.
"""
