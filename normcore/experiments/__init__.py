"""Experiments the chapters run: each a named function the reader can open."""
