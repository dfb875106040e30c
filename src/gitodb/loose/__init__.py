"""Loose object store: one zlib-compressed file per object under ``objects/xx/``."""
