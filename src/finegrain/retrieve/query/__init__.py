"""What a query says before any document is read: its category words expanded into members
(:mod:`.expand`) and its type predicted from its text (:mod:`.types`)."""
