"""Views rendered from saved results (terminal tables now; HTML in a later issue)."""
