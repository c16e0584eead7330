"""The command-line interface: one thin module per verb, mirroring the Python API.

Verb modules (``*_cmd.py``) define command functions only and never import the
root; :func:`finegrain.cli.app.build_cli` attaches them, and
:mod:`finegrain.cli.main` holds the built app and the ``finegrain`` entry point.
"""
