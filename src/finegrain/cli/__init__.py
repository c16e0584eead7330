"""The command-line interface: one thin module per verb, mirroring the Python API."""
