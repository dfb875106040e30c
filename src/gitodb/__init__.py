"""gitodb: Git's object and ref storage from Python, byte-for-byte compatible with Git."""

__version__ = "0.1.0"
