"""Word lists and lexical resources shared by the diagnosis tools (WordNet; Chinese lexicons)."""
