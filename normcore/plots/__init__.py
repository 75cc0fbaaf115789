"""Figures for the book. matplotlib is imported here (and in normcore.widgets) and nowhere else.

Call :func:`use_book_style` once before drawing; every figure helper in this package does.
"""

from normcore.plots.style import BOOK_COLOURS, book_rc, save_figure, use_book_style

__all__ = ["BOOK_COLOURS", "book_rc", "save_figure", "use_book_style"]
