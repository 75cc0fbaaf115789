"""Checks for chapter 7's exercises. Answers are computed with normcore and never printed, and
only once there is an answer to check (an unanswered exercise trains nothing)."""

from __future__ import annotations

import math
from typing import Any

from normcore.exercises import Verdict, verdict
from normcore.experiments import rates as R


def check_clip_loss(answer: Any) -> Verdict:
    """Exercise 1: the loss a network reports when every probability is clipped to 1e-12 and
    every row labelled 1 is therefore wrong: share of 1s in y_train times -ln(1e-12)."""
    share = float(R.subscribers().y_train.mean())
    return verdict(answer, share * -math.log(R.CLIP))


def check_rate_ten(answer: Any) -> Verdict:
    """Exercise 2: the final training loss of the normalised network, first seed, rate 10."""
    return verdict(answer, lambda: R.train(R.RUN_SEEDS[0], 10.0, True).loss, tolerance=5e-5)


def check_batch_of_ten(answer: Any) -> Verdict:
    """Exercise 3: test accuracy of the rate-0.05 normalised network (first seed) asked with
    the batch's own statistics in batches of 10 rather than 20."""

    def expected() -> float:
        data = R.subscribers()
        net = R.train(R.RUN_SEEDS[0], 0.05, True).net
        return R.accuracy(R.predict(net, data.x_test, "batch", batch=10), data.y_test)

    # the worked solution gives the accuracy to four decimals, and a reader who types what it
    # shows is right (exercise 2 is checked the same way)
    return verdict(answer, expected, tolerance=5e-5)
