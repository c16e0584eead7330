"""Views rendered from saved results: terminal tables and the self-contained HTML report."""
