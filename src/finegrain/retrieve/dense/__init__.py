"""Dense retrieval: text encoders (:mod:`.encoders`: one protocol, adapters, prompt templates, the embedding
cache), the vector index (:mod:`.index`: exact numpy or FAISS), the retriever over both
(:mod:`.retriever`), and e5's learned sparse head (:mod:`.sparse`). Importing this package imports no model."""
