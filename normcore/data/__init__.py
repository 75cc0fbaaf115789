"""The book's data: the crowd (25 fictional people) and chapter 7's subscriber table.

* :func:`load_crowd` returns a :class:`Crowd`: height, weight and a 0/1 label for 25 people.
* :func:`load_subscribers` returns :class:`Subscribers`: the table, split and standardised
  exactly as chapter 7's reference program does it (x_train 300×12, x_test 252×12).
* :func:`load_digits` returns :class:`Digits`: the 1,797 UCI 8 x 8 handwritten digits (CC BY 4.0).
"""

from normcore.data.crowd import Crowd, load_crowd
from normcore.data.digits import Digits, load_digits, split_digits
from normcore.data.subscribers import Subscribers, load_subscribers

__all__ = [
    "Crowd",
    "Digits",
    "Subscribers",
    "load_crowd",
    "load_digits",
    "load_subscribers",
    "split_digits",
]
