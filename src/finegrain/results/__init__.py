"""Saved results: the one schema of ``results.json`` (:mod:`.saved`, written and read by
:class:`~finegrain.results.saved.SavedResults`), the folder it lives in with its run (:mod:`.files`),
the results of ``finegrain perturb`` and ``finegrain contrast`` (:mod:`.probes`, kinds of
:class:`~finegrain.results.schema.Saved`), and MTEB's result file (:mod:`.mteb`)."""
