"""Walking history and trees: tree listings with Git's pathspecs, the commit walker.

Layer: between ``gitodb.repo`` and ``gitodb.cli``; works on a ``Repository``.
"""
