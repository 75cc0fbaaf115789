"""Widgets the chapters show, each built by a function and testable without a browser.

ipywidgets and matplotlib are imported here and in normcore.plots only, never by the core.
"""
