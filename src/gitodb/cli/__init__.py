"""Git-style commands; each is a thin shell over a library call (one module each)."""
